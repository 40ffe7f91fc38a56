import { type UserMessage, userText } from 'dsh-llm'
import { textResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { createHarness, dataOf, lastTurnEnd, texts, types } from './harness.ts'

describe('agent/pre-step', () => {
  it('a reject closes the turn blocked: no step events, no user/message, the prompt is gone (must show 2)', async () => {
    const h = await createHarness([textResponse('never')])
    const seen: unknown[] = []
    h.app.on('agent/pre-step', async ({ messages, turn, step, sessionPrefix }) => {
      seen.push({ messages: texts(messages), turn, step, sessionPrefix })
      return { kind: 'reject' }
    })
    const agent = await h.run('forbidden')
    expect(types(agent.session)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'turn/end',
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'blocked' })
    expect(seen).toEqual([{ messages: ['forbidden'], turn: 1, step: 1, sessionPrefix: [] }])
    expect(agent.inbox.nextTurn).toEqual([])
    expect(h.app.agentLoop.inbox(agent.session)).toEqual({ nextTurn: [], nextStep: [] })
    expect(h.model.callCount).toBe(0)
    expect(h.notes).toEqual([
      'created',
      'inserted:forbidden',
      'status:running',
      'claimed:forbidden@1',
      'status:idle',
    ])
  })

  it('a listener may add a plugin-sourced context message; both are logged in the returned order (must show 3)', async () => {
    const h = await createHarness([textResponse('ok')])
    const context = userText('workspace: 3 files', { kind: 'plugin', plugin: 'workspace' })
    h.app.on('agent/pre-step', async (_input, next) => {
      const decision = await next()
      return decision.kind === 'enter'
        ? { kind: 'enter', messages: [context, ...decision.messages] }
        : decision
    })
    const agent = await h.create()
    const prompt = userText('list files')
    agent.send(prompt)
    await agent.whenIdle()
    expect(types(agent.session).slice(3, 6)).toEqual(['step/start', 'user/message', 'user/message'])
    expect(dataOf(agent.session, 'user/message')).toEqual([context, prompt])
    expect(h.model.requests[0]?.messages).toEqual([context, prompt])
  })

  it('an outer listener wrapping next() keeps the inner listener’s rewrite (must show 3)', async () => {
    const h = await createHarness([textResponse('ok')])
    const calls: string[] = []
    // Registered first: outermost. It only observes and returns what next() gave.
    h.app.on('agent/pre-step', async (_input, next) => {
      calls.push('outer:before')
      const decision = await next()
      calls.push(`outer:after:${decision.kind === 'enter' ? texts(decision.messages).join(',') : 'reject'}`)
      return decision
    })
    h.app.on('agent/pre-step', async ({ messages }) => {
      calls.push('inner')
      const rewritten: UserMessage[] = messages.map((message) =>
        userText(`${texts([message])[0]} (rewritten)`),
      )
      return { kind: 'enter', messages: rewritten }
    })
    const agent = await h.run('hello')
    expect(calls).toEqual(['outer:before', 'inner', 'outer:after:hello (rewritten)'])
    expect(texts(dataOf<UserMessage>(agent.session, 'user/message'))).toEqual(['hello (rewritten)'])
    expect(texts(h.model.requests[0]?.messages ?? [])).toEqual(['hello (rewritten)'])
  })

  it('runs exactly once per proposed step, with the claimed batch of that step', async () => {
    const h = await createHarness([textResponse('a'), textResponse('b')])
    const seen: string[] = []
    let steered = false
    h.app.on('agent/pre-step', async ({ messages, step }, next) => {
      seen.push(`${step}:${texts(messages).join(',')}`)
      return next()
    })
    h.app.on('agent/turn-stopping', ({ agent }) => {
      if (!steered) agent.steer(userText('more'))
      steered = true
    })
    await h.run('first')
    expect(seen).toEqual(['1:first', '2:more'])
  })

  it('a throwing listener closes a balanced no-step turn with error and reports it', async () => {
    const h = await createHarness([])
    h.app.on('agent/pre-step', async () => {
      throw new Error('policy service down')
    })
    const agent = await h.run('hi')
    expect(types(agent.session)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'turn/end',
    ])
    const message = `agent/pre-step listener failed for agent ${agent.id}: policy service down`
    expect(lastTurnEnd(agent.session)).toEqual({
      kind: 'error',
      failure: { code: 'LISTENER_FAILED', message },
    })
    expect(h.errors.map((error) => [error.code, error.message])).toEqual([['LISTENER_FAILED', message]])
  })

  it('an invalid decision is a listener failure naming what was returned', async () => {
    const h = await createHarness([])
    h.app.on('agent/pre-step', async () => ({ kind: 'maybe' }) as never)
    const agent = await h.run('hi')
    expect(lastTurnEnd(agent.session)).toEqual({
      kind: 'error',
      failure: {
        code: 'LISTENER_FAILED',
        message: `agent/pre-step listener failed for agent ${agent.id}: returned {"kind":"maybe"}, not a pre-step decision`,
      },
    })
  })

  it('input inserted after the claim is not part of the claimed batch', async () => {
    const h = await createHarness([textResponse('a'), textResponse('b')])
    const agent = await h.create()
    let added = false
    h.app.on('agent/pre-step', async (input, next) => {
      if (!added) input.agent.send(userText('later'))
      added = true
      return next()
    })
    agent.send(userText('now'))
    await agent.whenIdle()
    expect(dataOf(agent.session, 'turn/start')).toEqual([
      { turn: 1, trigger: { kind: 'send', target: 'next-turn' } },
      { turn: 2, trigger: { kind: 'queued' } },
    ])
    expect(texts(h.model.requests[0]?.messages ?? [])).toEqual(['now'])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual(['now', 'a', 'later'])
  })
})
