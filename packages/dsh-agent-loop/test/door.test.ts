/**
 * Validation at the door (issue 13 item 6): bad call options fail `create`/`resume` with a typed
 * error naming the field and create nothing; bad `send`/`inject` content throws synchronously and
 * stages nothing. And listeners that act (item 7): `cancel()` from an `agent/status` listener and
 * `send()` from an abort listener are honoured.
 */
import type { Agent } from 'dsh-agent-loop'
import { type UserMessage, userText } from 'dsh-llm'
import { hangUntilAborted, textBlockChunks, textResponse, toolCallResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { createHarness, dataOf, echoTool, lastTurnEnd, outline, texts, whenLogged } from './harness.ts'

describe('call options are validated at create and resume', () => {
  const bad: [string, Record<string, unknown>, string][] = [
    ['maxTokens 0', { maxTokens: 0 }, 'maxTokens must be an integer >= 1, got 0'],
    ['maxTokens 1.5', { maxTokens: 1.5 }, 'maxTokens must be an integer >= 1, got 1.5'],
    [
      'temperature NaN',
      { temperature: Number.NaN },
      'temperature must be a finite number in [0, 2], got NaN',
    ],
    ['temperature 3', { temperature: 3 }, 'temperature must be a finite number in [0, 2], got 3'],
    ['topP 1.5', { topP: 1.5 }, 'topP must be a finite number in [0, 1], got 1.5'],
    [
      'reasoningEffort',
      { reasoningEffort: 'max' },
      `reasoningEffort must be one of 'low', 'medium', 'high', got "max"`,
    ],
    ['stop not an array', { stop: 'END' }, 'stop must be an array of strings, got "END"'],
    ['stop with a number', { stop: ['a', 1] }, 'stop[1] must be a string, got 1'],
  ]
  for (const [what, options, message] of bad) {
    it(`refuses ${what}, naming the field, and creates no session`, async () => {
      const h = await createHarness()
      const before = (await h.app.sessions.list()).sessions.length
      await expect(h.create(options)).rejects.toMatchObject({
        name: 'AgentLoopError',
        code: 'INVALID_OPTIONS',
        message: `agentLoop.create: ${message}`,
      })
      expect((await h.app.sessions.list()).sessions.length).toBe(before)
      const agent = await h.create()
      await agent.dispose()
      await expect(
        h.app.agentLoop.resume(agent.session.id, { provider: 'test', model: 'm', ...options }),
      ).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: `agentLoop.resume: ${message}` })
    })
  }
})

describe('send and inject validate their message synchronously', () => {
  const cases: [string, unknown, string][] = [
    ['not an object', 'hello', 'the message must be an object, got a string'],
    ['an assistant message', { ...userText('x'), role: 'assistant' }, 'role must be "user"'],
    ['content with a bad block', { ...userText('x'), content: [{ type: 'text' }] }, 'content[0]'],
    [
      'content with a BigInt',
      { ...userText('x'), content: [{ type: 'text', text: 1n }] },
      'content[0].text is a BigInt',
    ],
    ['a missing id', { ...userText('x'), id: '' }, 'id'],
  ]
  for (const [what, message, problem] of cases) {
    for (const method of ['send', 'inject'] as const) {
      it(`${method} refuses ${what} with INVALID_MESSAGE; nothing is staged or logged`, async () => {
        const h = await createHarness([textResponse('ok')])
        const agent = await h.create()
        const length = agent.session.events.length
        expect(() => agent[method](message as UserMessage)).toThrow(
          expect.objectContaining({
            code: 'INVALID_MESSAGE',
            message: expect.stringContaining(`Agent.${method}:`),
          }),
        )
        expect(() => agent[method](message as UserMessage)).toThrow(
          expect.objectContaining({ message: expect.stringContaining(problem) }),
        )
        expect(agent.session.events.length).toBe(length)
        expect(agent.inbox.nextTurn).toEqual([])
        expect(agent.status).toBe('idle')
      })
    }
  }
})

describe('listeners that act', () => {
  it('cancel() from an agent/status listener for running is honoured', async () => {
    const h = await createHarness([textResponse('never')])
    let cancelled = false
    h.app.on('agent/status', (agent: Agent, status) => {
      if (status === 'running' && !cancelled) {
        cancelled = true
        agent.cancel('listener said no')
      }
    })
    const agent = await h.run('go')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'listener said no' })
    expect(h.model.callCount).toBe(0)
    expect(agent.status).toBe('idle')
  })

  it('send() right after cancel() in an agent/status listener for running runs in the next turn (issue 31 item 4)', async () => {
    const h = await createHarness([textResponse('answered')])
    let acted = false
    h.app.on('agent/status', (agent: Agent, status) => {
      if (status !== 'running' || acted) return
      acted = true
      agent.cancel('user')
      agent.send(userText('after the cancel'))
    })
    const agent = await h.run('first')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    const ends = dataOf<{ turn: number; reason: unknown }>(agent.session, 'turn/end')
    expect(ends).toEqual([
      { turn: 1, reason: { kind: 'aborted', cause: 'user' } },
      { turn: 2, reason: { kind: 'completed' } },
    ])
    expect(h.model.callCount).toBe(1)
    expect(texts(h.model.requests[0]?.messages ?? [])).toEqual(['after the cancel'])
    expect(h.notes).toContain('claimed:after the cancel@2')
    expect(h.notes).not.toContain('claimed:first@1')
    expect(agent.inbox.nextTurn).toEqual([])
  })

  it('with keepInbox, a cancel() from an agent/status listener leaves the prompt pending for the next wake', async () => {
    const h = await createHarness([textResponse('one'), textResponse('two')])
    let acted = false
    h.app.on('agent/status', (agent: Agent, status) => {
      if (status !== 'running' || acted) return
      acted = true
      agent.cancel('user', { keepInbox: true })
    })
    const agent = await h.run('first')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'user' })
    expect(h.model.callCount).toBe(0)
    expect(texts(agent.inbox.nextTurn)).toEqual(['first'])
    agent.send(userText('second'))
    await agent.whenIdle()
    expect(texts(h.model.requests[0]?.messages ?? [])).toEqual(['first'])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual(['first', 'one', 'second'])
  })

  it('send() from an abort listener is kept for the next turn', async () => {
    const h = await createHarness([
      hangUntilAborted(textBlockChunks(0, 'x').slice(0, 2)),
      textResponse('second'),
    ])
    h.app.on('agent/pre-step', async (input, next) => {
      if (input.turn === 1) {
        input.signal.addEventListener('abort', () => input.agent.send(userText('after the cancel')))
      }
      return next()
    })
    const agent = await h.create()
    agent.send(userText('first'))
    await whenLogged(h.app, agent.session, (event) => event.type === 'assistant/chunk')
    agent.cancel('stop')
    await agent.whenIdle()
    expect(h.model.callCount).toBe(2)
    expect(outline(agent.session).filter((type) => type === 'turn/end')).toHaveLength(2)
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(h.notes).toContain('claimed:after the cancel@2')
  })
})

describe('messages from listeners are checked like send and inject', () => {
  it('a pre-step batch with a message that is not JSON ends the turn LISTENER_FAILED, naming the field', async () => {
    const h = await createHarness([textResponse('never')])
    h.app.on('agent/pre-step', async () => ({
      kind: 'enter',
      messages: [{ ...userText('x'), content: [{ type: 'text', text: 1n }] } as unknown as UserMessage],
    }))
    const agent = await h.run('go')
    const reason = lastTurnEnd(agent.session) as { kind: string; failure: { code: string; message: string } }
    expect(reason.kind).toBe('error')
    expect(reason.failure.code).toBe('LISTENER_FAILED')
    expect(reason.failure.message).toContain('content[0].text is a BigInt')
    expect(h.model.callCount).toBe(0)
  })

  it('an additional context that is not a user message fails only its call', async () => {
    const h = await createHarness([toolCallResponse('c1', 'echo', { text: 'a' }), textResponse('done')])
    echoTool(h)
    h.app.on('tools/post-execute', async (_input, next) => ({
      ...(await next()),
      additionalContexts: [{ ...userText('ctx'), content: [{ type: 'text' }] } as unknown as UserMessage],
    }))
    const agent = await h.run('go')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    const [result] = dataOf<{ error?: { code: string; message: string } }>(agent.session, 'tool/result')
    expect(result?.error?.code).toBe('LISTENER_FAILED')
    expect(result?.error?.message).toContain('bad additional context')
  })
})

describe('what agent/request and agent/system-prompt listeners return is checked too', () => {
  it('a call config with a NaN temperature ends the turn LISTENER_FAILED naming the field', async () => {
    const h = await createHarness([textResponse('never')])
    h.app.on('agent/request', async (input) => ({ ...input.config, temperature: Number.NaN }))
    const agent = await h.run('go')
    const reason = lastTurnEnd(agent.session) as { kind: string; failure: { code: string; message: string } }
    expect(reason.failure.code).toBe('LISTENER_FAILED')
    expect(reason.failure.message).toContain('temperature must be a finite number in [0, 2], got NaN')
    expect(h.model.callCount).toBe(0)
  })

  it('a system prompt with a lone surrogate reaches the header and the provider repaired', async () => {
    const h = await createHarness([textResponse('ok')])
    h.app.on('agent/system-prompt', async () => 'be brief \uD800')
    await h.run('go')
    expect(h.model.requests[0]?.system).toBe('be brief \uFFFD')
  })
})
