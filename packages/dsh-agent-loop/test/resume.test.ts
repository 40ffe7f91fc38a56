import { SessionId, userText } from 'dsh-llm'
import { textBlockChunks, textResponse, toolCallsResponse } from 'dsh-llm/testing'
import { MemoryStorage } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHarness, dataOf, type Harness, lastTurnEnd, texts, types, whenLogged } from './harness.ts'

function registerTools(h: Harness): void {
  h.app.tools.register({
    name: 'fast',
    description: 'f',
    parameters: z.object({}),
    execute: () => 'fast done',
  })
  h.app.tools.register({
    name: 'hang',
    description: 'never returns',
    parameters: z.object({}),
    execute: () => new Promise<string>(() => undefined),
  })
  h.app.tools.register({
    name: 'write',
    description: 'w',
    mode: 'exclusive',
    parameters: z.object({}),
    execute: () => 'written',
  })
}

describe('resume (must show 10)', () => {
  it('over a log killed mid tool batch: closers are committed and the next request is valid', async () => {
    const storage = new MemoryStorage()
    const id = SessionId('crashed')
    const before = await createHarness(
      [
        toolCallsResponse([
          { id: 'c1', name: 'fast', args: {} },
          { id: 'c2', name: 'hang', args: {} },
          { id: 'c3', name: 'write', args: {} },
        ]),
      ],
      { storage },
    )
    registerTools(before)
    const crashed = await before.create({ sessionId: id })
    crashed.send(userText('do three things'))
    await whenLogged(before.app, crashed.session, (event) => event.type === 'tool/result')
    crashed.send(userText('queued for later'))
    await crashed.session.flush()
    const killedAt = crashed.session.seq
    expect(types(crashed.session).slice(-4)).toEqual([
      'tool/call',
      'tool/call',
      'tool/result',
      'agent/inbox/spliced',
    ])
    // The process dies here: nothing more is written, and its write lease goes with it.
    await storage.release(id)

    const after = await createHarness([textResponse('the last two did not finish'), textResponse('ok')], {
      storage,
    })
    registerTools(after)
    const agent = await after.app.agentLoop.resume(id, { provider: 'test', model: 'm' })
    expect(types(agent.session).slice(killedAt)).toEqual([
      'tool/result',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    const closers = dataOf<{ error?: { code: string } }>(agent.session, 'tool/result').slice(1)
    expect(closers.map((data) => data.error?.code)).toEqual(['TOOL_OUTCOME_UNKNOWN', 'TOOL_NOT_STARTED'])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'interrupted' })
    expect(agent.status).toBe('idle')
    expect(texts(agent.inbox.nextTurn)).toEqual(['queued for later'])
    expect(after.model.callCount).toBe(0)

    agent.send(userText('what happened?'))
    await agent.whenIdle()
    expect(dataOf(agent.session, 'turn/start').slice(1)).toEqual([
      { turn: 2, trigger: { kind: 'send', target: 'next-turn' } },
      { turn: 3, trigger: { kind: 'queued' } },
    ])
    expect(dataOf<{ reason: string }>(agent.session, 'request/header').map((data) => data.reason)).toEqual([
      'initial',
      'resume',
    ])
    expect(texts(after.model.requests[0]?.messages ?? [])).toEqual([
      'do three things',
      'call:fast|call:hang|call:write',
      'result:c1',
      'result:c2',
      'result:c3',
      'queued for later',
    ])
    expect(texts(after.model.requests[1]?.messages ?? []).slice(-2)).toEqual([
      'the last two did not finish',
      'what happened?',
    ])
    expect(after.errors).toEqual([])
  })

  it('restores pending inbox items without running them, and continues turn numbering', async () => {
    const h = await createHarness([textResponse('one'), textResponse('two')])
    const first = await h.run('run now', { sessionId: SessionId('paused') })
    first.send(userText('later a'), { wakeup: false })
    first.send(userText('later b'), { target: 'next-step', wakeup: false })
    await first.dispose()
    const resumed = await h.app.agentLoop.resume(SessionId('paused'), { provider: 'test', model: 'm' })
    const seq = resumed.session.seq
    expect(resumed.status).toBe('idle')
    expect(resumed.inbox.snapshot()).toEqual({
      nextTurn: [expect.objectContaining({ content: [{ type: 'text', text: 'later a' }] })],
      nextStep: [expect.objectContaining({ content: [{ type: 'text', text: 'later b' }] })],
    })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(resumed.session.seq).toBe(seq)
    resumed.steer(userText('go'))
    await resumed.whenIdle()
    expect(dataOf(resumed.session, 'turn/start').at(-1)).toEqual({
      turn: 2,
      trigger: { kind: 'send', target: 'next-step' },
    })
    expect(texts(h.model.requests[1]?.messages ?? []).slice(-3)).toEqual(['later a', 'later b', 'go'])
  })

  it('refuses a session another live agent drives, and an unknown session', async () => {
    const h = await createHarness([{ chunks: textBlockChunks(0, 'x'), delayMs: 1 }])
    const agent = await h.create({ sessionId: SessionId('busy') })
    await expect(
      h.app.agentLoop.resume(SessionId('busy'), { provider: 'test', model: 'm' }),
    ).rejects.toMatchObject({
      code: 'SESSION_BUSY',
      message: `session busy is already driven by agent ${agent.id}`,
    })
    await expect(
      h.app.agentLoop.resume(SessionId('missing'), { provider: 'test', model: 'm' }),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
  })
})
