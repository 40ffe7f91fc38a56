import { userText } from 'dsh-llm'
import { errorResponse, textResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { createHarness, dataOf, lastTurnEnd, outline } from './harness.ts'

describe('provider failures and agent/request-error', () => {
  it('the default policy retries a rate limit inside the same step', async () => {
    const h = await createHarness([
      errorResponse('RATE_LIMIT', 'slow down', { retryAfterMs: 1 }),
      textResponse('ok'),
    ])
    const agent = await h.run('hi')
    expect(outline(agent.session).slice(3)).toEqual([
      'step/start',
      'user/message',
      'request/header',
      'assistant/chunk…',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(dataOf(agent.session, 'step/start')).toHaveLength(1)
    expect(dataOf(agent.session, 'assistant/chunk')[0]).toEqual({
      turn: 1,
      step: 1,
      chunk: {
        type: 'finish',
        reason: { kind: 'error', failure: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 1 } },
      },
    })
    expect(h.model.requests).toHaveLength(2)
    expect(h.model.requests[1]).toEqual(h.model.requests[0])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(h.errors).toEqual([])
  })

  it('a failure the policy does not retry ends the turn error and is reported', async () => {
    const h = await createHarness([errorResponse('AUTH', 'bad key', { status: 401 })])
    const agent = await h.run('hi')
    const failure = { code: 'AUTH', message: 'bad key', status: 401 }
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'error', failure })
    expect(outline(agent.session).slice(-4)).toEqual([
      'request/header',
      'assistant/chunk…',
      'step/end',
      'turn/end',
    ])
    expect(dataOf(agent.session, 'assistant/message')).toEqual([])
    expect(h.errors.map((error) => [error.name, error.code, error.message])).toEqual([
      ['LlmError', 'AUTH', 'bad key'],
    ])
  })

  it('a listener may retry what the policy would not, and sees each attempt', async () => {
    const h = await createHarness([
      errorResponse('AUTH', 'token expired'),
      errorResponse('AUTH', 'token expired'),
      textResponse('ok'),
    ])
    const seen: unknown[] = []
    h.app.on('agent/request-error', async ({ failure, attempt, turn, step }, next) => {
      seen.push({ code: failure.code, attempt, turn, step, fallback: await next() })
      return { kind: 'retry', delayMs: 0 }
    })
    const agent = await h.run('hi')
    expect(seen).toEqual([
      { code: 'AUTH', attempt: 1, turn: 1, step: 1, fallback: { kind: 'fail' } },
      { code: 'AUTH', attempt: 2, turn: 1, step: 1, fallback: { kind: 'fail' } },
    ])
    expect(h.model.callCount).toBe(3)
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
  })

  it('the retry option bounds the default policy', async () => {
    const h = await createHarness([
      errorResponse('SERVER', 'oops', { retryAfterMs: 0 }),
      errorResponse('SERVER', 'oops again', { retryAfterMs: 0 }),
      textResponse('never'),
    ])
    const agent = await h.run('hi', { retry: { maxAttempts: 2 } })
    expect(h.model.callCount).toBe(2)
    expect(lastTurnEnd(agent.session)).toEqual({
      kind: 'error',
      failure: { code: 'SERVER', message: 'oops again', retryAfterMs: 0 },
    })
  })

  it('a cancel during the retry delay ends the turn aborted', async () => {
    const h = await createHarness([
      errorResponse('RATE_LIMIT', 'wait', { retryAfterMs: 10_000 }),
      textResponse('never'),
    ])
    const agent = await h.create()
    h.app.on('agent/request-error', async (_input, next) => {
      const decision = await next()
      setTimeout(() => agent.cancel('gave up'), 5)
      return decision
    })
    agent.send(userText('hi'))
    await agent.whenIdle()
    expect(h.model.callCount).toBe(1)
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'gave up' })
  })

  it('invalid retry options are refused at create', async () => {
    const h = await createHarness()
    await expect(h.create({ retry: { maxAttempts: 0 } })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: 'resolveRetryPolicy: maxAttempts must be an integer >= 1, got 0',
    })
    await expect(h.create({ maxSteps: 0 })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: 'agentLoop.create: maxSteps must be an integer >= 1, got 0',
    })
  })
})
