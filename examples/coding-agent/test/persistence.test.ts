/** Runs the code of docs/persistence.md (snippets/persistence.ts) over real JSONL files. */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { messageText, SessionId, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { continueSession, describeSessions, forkBeforeLastTurn, openApp } from '../snippets/persistence.ts'

const fresh = () => mkdtempSync(join(tmpdir(), 'dsh-persist-'))

describe('persistence', () => {
  it('resumes a stored session in a new app: resume header, turn numbering continues', async () => {
    const dir = fresh()
    const model = scriptedAdapter([textResponse('first'), textResponse('second')])
    const first = await openApp(dir)
    first.llm.registerAdapter('deepseek', model)
    const agent = await first.agentLoop.create({ provider: 'deepseek', model: 'deepseek-chat' })
    agent.send(userText('one'))
    await agent.whenIdle()
    const id = agent.session.id
    await agent.dispose()
    await first.fiber.dispose()

    const second = await openApp(dir)
    second.llm.registerAdapter('deepseek', model)
    await continueSession(second, id, 'two')
    await second.fiber.dispose()

    const lines = readFileSync(join(dir, `${id}.jsonl`), 'utf8')
      .trimEnd()
      .split('\n')
    const events = lines
      .slice(1)
      .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> })
    expect(events.filter((e) => e.type === 'request/header').map((e) => e.data.reason)).toEqual([
      'initial',
      'resume',
    ])
    expect(events.filter((e) => e.type === 'turn/start').map((e) => e.data.turn)).toEqual([1, 2])
    expect(model.requests[1]?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
  })

  it('closes a turn a crash left open when the session is opened again', async () => {
    const dir = fresh()
    const app = await openApp(dir)
    app.llm.registerAdapter('deepseek', scriptedAdapter([textResponse('after the crash')]))
    const session = await app.sessions.create({ id: SessionId('crashed') })
    session.append('turn/start', { turn: 1, trigger: { kind: 'send', target: 'next-turn' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('user/message', userText('hi'))
    await app.sessions.close(session) // the process "dies" here: turn 1 is still open in the file
    await continueSession(app, SessionId('crashed'), 'again')
    const reopened = await app.sessions.open(SessionId('crashed'))
    expect(reopened.events.slice(3, 6).map((event) => [event.type, event.data])).toEqual([
      ['step/end', { turn: 1, step: 1 }],
      ['turn/end', { turn: 1, reason: { kind: 'interrupted' } }],
      ['agent/inbox/spliced', expect.objectContaining({ target: 'next-turn' })],
    ])
    await app.fiber.dispose()
  })

  it('forks before the last turn and lists both sessions', async () => {
    const dir = fresh()
    const app = await openApp(dir)
    app.llm.registerAdapter('deepseek', scriptedAdapter([textResponse('a'), textResponse('b')]))
    const agent = await app.agentLoop.create({
      provider: 'deepseek',
      model: 'deepseek-chat',
      sessionId: SessionId('main'),
    })
    agent.send(userText('one'))
    await agent.whenIdle()
    agent.send(userText('two'))
    await agent.whenIdle()
    const child = await forkBeforeLastTurn(app, agent.session)
    const boundary = agent.session.events.findLast((event) => event.type === 'turn/start')?.seq
    expect(child.events.map((event) => event.type)).toEqual([
      ...agent.session.events.slice(0, boundary).map((event) => event.type),
      'session/end-seed',
    ])
    expect(await describeSessions(app)).toEqual(['main', `${child.id} (fork of main at seq ${boundary})`])
    await agent.dispose()
    await app.fiber.dispose()
  })

  it("keeps the forked turn's prompt queued in the child's inbox: clear it to ask something else", async () => {
    const dir = fresh()
    const app = await openApp(dir)
    const model = scriptedAdapter([textResponse('a'), textResponse('b'), textResponse('c')])
    app.llm.registerAdapter('deepseek', model)
    const agent = await app.agentLoop.create({ provider: 'deepseek', model: 'deepseek-chat' })
    await agent.prompt('one')
    await agent.prompt('two')
    const child = await forkBeforeLastTurn(app, agent.session)
    const retry = await app.agentLoop.create({ session: child, provider: 'deepseek', model: 'deepseek-chat' })
    const queued = retry.inbox.snapshot().nextTurn.map((entry) => messageText(entry))
    expect(queued).toEqual(['two'])
    retry.inbox.clear()
    const result = await retry.prompt('three')
    expect(result.text).toBe('c')
    const last = model.requests[model.requests.length - 1]
    expect(last?.messages.map((message) => `${message.role}: ${messageText(message)}`)).toEqual([
      'user: one',
      'assistant: a',
      'user: three',
    ])
    await retry.dispose()
    await app.sessions.close(child)
    await agent.dispose()
    await app.fiber.dispose()
  })

  it('lets one writer hold a session: a second app cannot open it', async () => {
    const dir = fresh()
    const one = await openApp(dir)
    const session = await one.sessions.create({ id: SessionId('held') })
    const two = await openApp(dir)
    await expect(two.sessions.open(session.id)).rejects.toMatchObject({ code: 'LOCKED' })
    await one.fiber.dispose()
    await expect(two.sessions.open(session.id)).resolves.toMatchObject({ id: 'held' })
    await two.fiber.dispose()
  })
})
