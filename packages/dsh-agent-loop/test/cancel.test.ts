import { type AssistantMessage, type UserMessage, userText } from 'dsh-llm'
import { hangUntilAborted, textBlockChunks, textResponse, toolCallsResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHarness, dataOf, gate, lastTurnEnd, outline, texts, types, whenLogged } from './harness.ts'

describe('cancellation (must show 9)', () => {
  it('cancel mid-stream keeps the visible text as an interrupted assistant message', async () => {
    const partial = textBlockChunks(0, 'The answer is').slice(0, 2)
    const h = await createHarness([hangUntilAborted(partial)])
    const agent = await h.create()
    agent.send(userText('what is it?'))
    await whenLogged(
      h.app,
      agent.session,
      (event) => event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta',
    )
    agent.cancel('user pressed stop')
    await agent.whenIdle()
    expect(outline(agent.session).slice(3)).toEqual([
      'step/start',
      'user/message',
      'request/header',
      'assistant/chunk…',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const [answer] = dataOf<{ message: AssistantMessage; interrupted?: boolean }>(
      agent.session,
      'assistant/message',
    )
    expect(answer?.interrupted).toBe(true)
    expect(answer?.message.content).toEqual([{ type: 'text', text: 'The answer is' }])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'user pressed stop' })
    expect(texts(agent.session.deriveMessages())).toEqual(['what is it?', 'The answer is'])
    expect(agent.status).toBe('idle')
  })

  it('a cancelled stream with nothing visible appends no assistant message', async () => {
    const h = await createHarness([hangUntilAborted()])
    const agent = await h.create()
    agent.send(userText('q'))
    await whenLogged(h.app, agent.session, (event) => event.type === 'request/header')
    agent.cancel()
    await agent.whenIdle()
    expect(types(agent.session).slice(3)).toEqual([
      'step/start',
      'user/message',
      'request/header',
      'step/end',
      'turn/end',
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'cancelled' })
  })

  it('cancel during tools: the started call drains, the unstarted one gets an error result', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'long', args: {} },
        { id: 'c2', name: 'write', args: {} },
      ]),
    ])
    const running = gate()
    let wrote = false
    h.app.tools.register({
      name: 'long',
      description: 'runs until cancelled',
      parameters: z.object({}),
      execute: async (_args, { signal }) => {
        running.open()
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
        return 'stopped early'
      },
    })
    h.app.tools.register({
      name: 'write',
      description: 'exclusive',
      mode: 'exclusive',
      parameters: z.object({}),
      execute: () => {
        wrote = true
        return 'written'
      },
    })
    const agent = await h.create()
    agent.send(userText('work'))
    await running.promise
    agent.cancel('stop')
    await agent.whenIdle()
    expect(wrote).toBe(false)
    expect(types(agent.session).slice(-5)).toEqual([
      'tool/call',
      'tool/result',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(dataOf(agent.session, 'tool/call')).toHaveLength(1)
    const results = dataOf<{ message: { content: [{ content: { text: string }[] }] }; error?: unknown }>(
      agent.session,
      'tool/result',
    )
    expect(results.map((data) => [data.message.content[0].content[0]?.text, data.error])).toEqual([
      ['stopped early', undefined],
      [
        'tool "write" (call c2) was not started: the turn was cancelled',
        {
          code: 'TOOL_NOT_STARTED',
          message: 'tool "write" (call c2) was not started: the turn was cancelled',
        },
      ],
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'stop' })
    expect(h.model.callCount).toBe(1)
  })

  it('cancel clears the inbox durably; with keepInbox the queue stays and waits for a wake', async () => {
    const opened = textBlockChunks(0, 'x').slice(0, 1)
    const h = await createHarness([
      hangUntilAborted(opened),
      hangUntilAborted(opened),
      textResponse('q1'),
      textResponse('q2'),
    ])
    const agent = await h.create()
    agent.send(userText('first'))
    agent.send(userText('queued'))
    agent.send(userText('steer'), { target: 'next-step', wakeup: false })
    await whenLogged(h.app, agent.session, (event) => event.type === 'assistant/chunk')
    agent.cancel()
    await agent.whenIdle()
    expect(h.app.agentLoop.inbox(agent.session)).toEqual({ nextTurn: [], nextStep: [] })
    expect(h.notes.filter((note) => note.startsWith('discarded'))).toEqual([
      'discarded:queued',
      'discarded:steer',
    ])
    const cancels = dataOf<{ outcome?: string; removedCount?: number }>(
      agent.session,
      'agent/inbox/spliced',
    ).filter((data) => data.outcome === 'canceled')
    expect(cancels.map((data) => data.removedCount)).toEqual([1, 1])
    expect(agent.session.lastTurn()).toBe(1)

    agent.send(userText('second'))
    agent.send(userText('kept'))
    await whenLogged(
      h.app,
      agent.session,
      (event) => event.type === 'assistant/chunk' && agent.session.lastTurn() === 2,
    )
    agent.cancel('pause', { keepInbox: true })
    await agent.whenIdle()
    expect(agent.session.lastTurn()).toBe(2)
    expect(texts(agent.inbox.nextTurn)).toEqual(['kept'])
    agent.send(userText('wake'))
    await agent.whenIdle()
    expect(dataOf(agent.session, 'turn/start').slice(2)).toEqual([
      { turn: 3, trigger: { kind: 'send', target: 'next-turn' } },
      { turn: 4, trigger: { kind: 'queued' } },
    ])
    expect(texts(h.model.requests[2]?.messages ?? []).slice(-1)).toEqual(['kept'])
    expect(texts(h.model.requests[3]?.messages ?? []).slice(-1)).toEqual(['wake'])
  })

  it('the first cause wins', async () => {
    const h = await createHarness([hangUntilAborted()])
    const agent = await h.create()
    agent.send(userText('q'))
    agent.cancel('first')
    agent.cancel('second')
    await agent.whenIdle()
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'first' })
  })

  it('a waking send after an abort runs after the aborted turn has closed', async () => {
    const h = await createHarness([
      hangUntilAborted(textBlockChunks(0, 'x').slice(0, 1)),
      textResponse('fresh answer'),
    ])
    const agent = await h.create()
    agent.send(userText('slow'))
    await whenLogged(h.app, agent.session, (event) => event.type === 'assistant/chunk')
    agent.cancel('changed my mind')
    agent.send(userText('instead'))
    await agent.whenIdle()
    const turns = agent.session.events
      .filter((event) => event.type === 'turn/start' || event.type === 'turn/end')
      .map((event) => [event.type, event.data])
    expect(turns).toEqual([
      ['turn/start', { turn: 1, trigger: { kind: 'send', target: 'next-turn' } }],
      ['turn/end', { turn: 1, reason: { kind: 'aborted', cause: 'changed my mind' } }],
      ['turn/start', { turn: 2, trigger: { kind: 'queued' } }],
      ['turn/end', { turn: 2, reason: { kind: 'completed' } }],
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual(['slow', 'instead'])
  })

  it('cancel from idle is a no-op', async () => {
    const h = await createHarness([textResponse('ok')])
    const agent = await h.create()
    agent.send(userText('queued only'), { wakeup: false })
    const before = agent.session.seq
    agent.cancel('nothing to cancel')
    expect(agent.session.seq).toBe(before)
    expect(texts(agent.inbox.nextTurn)).toEqual(['queued only'])
    expect(agent.status).toBe('idle')
  })

  it('three rapid sends make three turns, in order', async () => {
    const h = await createHarness([textResponse('A'), textResponse('B'), textResponse('C')])
    const agent = await h.create()
    agent.send(userText('a'))
    agent.send(userText('b'))
    agent.send(userText('c'))
    await agent.whenIdle()
    expect(dataOf(agent.session, 'turn/start')).toEqual([
      { turn: 1, trigger: { kind: 'send', target: 'next-turn' } },
      { turn: 2, trigger: { kind: 'queued' } },
      { turn: 3, trigger: { kind: 'queued' } },
    ])
    expect(dataOf<{ reason: unknown }>(agent.session, 'turn/end').map((data) => data.reason)).toEqual([
      { kind: 'completed' },
      { kind: 'completed' },
      { kind: 'completed' },
    ])
    expect(texts(dataOf<UserMessage>(agent.session, 'user/message'))).toEqual(['a', 'b', 'c'])
    expect(texts(h.model.requests[2]?.messages ?? [])).toEqual(['a', 'A', 'b', 'B', 'c'])
    expect(h.notes.filter((note) => note.startsWith('status'))).toEqual(['status:running', 'status:idle'])
  })
})

describe('dispose (must show 9)', () => {
  it('dispose mid-turn cancels, waits for quiescence and releases the session', async () => {
    const h = await createHarness([hangUntilAborted(textBlockChunks(0, 'partial').slice(0, 2))])
    const agent = await h.create()
    agent.send(userText('long job'))
    agent.send(userText('pending'))
    await whenLogged(h.app, agent.session, (event) => event.type === 'assistant/chunk')
    await agent.dispose()
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'disposed' })
    expect(agent.status).toBe('idle')
    expect(agent.disposed).toBe(true)
    expect(h.app.sessions.get(agent.session.id)).toBeUndefined()
    expect(h.notes.slice(-2)).toEqual(['status:idle', 'disposed'])
    expect(() => agent.send(userText('too late'))).toThrow(
      expect.objectContaining({
        code: 'AGENT_DISPOSED',
        message: `Agent.send: agent ${agent.id} is disposed`,
      }),
    )
    const reopened = await h.app.sessions.open(agent.session.id)
    expect(texts(h.app.agentLoop.inbox(reopened).nextTurn)).toEqual(['pending'])
    expect(reopened.events.at(-1)?.type).toBe('turn/end')
  })

  it('dispose leaves a caller-owned session open, and a second agent may then drive it', async () => {
    const h = await createHarness([textResponse('one'), textResponse('two')])
    const session = await h.app.sessions.create()
    const first = await h.create({ session })
    await expect(h.create({ session })).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    first.send(userText('hi'))
    await first.whenIdle()
    await first.dispose()
    await first.dispose()
    expect(h.app.sessions.get(session.id)).toBe(session)
    await h.run('again', { session })
    expect(dataOf(session, 'request/header').map((data) => (data as { reason: string }).reason)).toEqual([
      'initial',
      'resume',
    ])
    expect(session.lastTurn()).toBe(2)
  })

  it('whenIdle and dispose wait for an idle inject to be flushed', async () => {
    const h = await createHarness()
    const agent = await h.create()
    let flushed = false
    const original = agent.session.flush.bind(agent.session)
    ;(agent.session as { flush: () => Promise<void> }).flush = async () => {
      await new Promise((resolve) => setTimeout(resolve, 10))
      await original()
      flushed = true
    }
    agent.inject(userText('remember this'))
    await agent.whenIdle()
    expect(flushed).toBe(true)
  })
})
