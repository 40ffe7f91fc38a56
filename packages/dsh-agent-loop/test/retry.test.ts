import { reconstructRequests } from 'dsh-invariants'
import { userText } from 'dsh-llm'
import { errorResponse, textBlockChunks, textResponse, throwAfter } from 'dsh-llm/testing'
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
      'request/retry',
      'assistant/chunk…',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(dataOf(agent.session, 'request/retry')).toEqual([
      {
        turn: 1,
        step: 1,
        attempt: 1,
        delayMs: 1,
        failure: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 1 },
      },
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
    expect(
      dataOf<{ attempt: number; delayMs: number }>(agent.session, 'request/retry').map(
        ({ attempt, delayMs }) => [attempt, delayMs],
      ),
    ).toEqual([
      [1, 0],
      [2, 0],
    ])
  })

  it('records every attempt: the log explains each request sent, also after an adapter that threw', async () => {
    const h = await createHarness([
      throwAfter(new Error('socket hang up'), textBlockChunks(0, 'par')),
      errorResponse('SERVER', 'overloaded', { requestId: 'req-2', status: 503, retryAfterMs: 0 }),
      textResponse('done'),
    ])
    const agent = await h.run('hi', {
      retry: { initialDelayMs: 0, retryableCodes: ['ADAPTER_THREW', 'SERVER'] },
    })
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(dataOf(agent.session, 'request/retry')).toEqual([
      {
        turn: 1,
        step: 1,
        attempt: 1,
        delayMs: 0,
        failure: { code: 'ADAPTER_THREW', message: 'adapter for "test" threw: socket hang up' },
      },
      {
        turn: 1,
        step: 1,
        attempt: 2,
        delayMs: 0,
        failure: { code: 'SERVER', message: 'overloaded', requestId: 'req-2', status: 503, retryAfterMs: 0 },
      },
    ])
    // One re-derived request per attempt.
    expect(reconstructRequests(agent.session.events)).toHaveLength(3)
    expect(h.model.requests).toHaveLength(3)
  })

  it('an empty response is retried once, then ends the turn with EMPTY_RESPONSE', async () => {
    const h = await createHarness([
      errorResponse('EMPTY_RESPONSE', 'nothing came back'),
      errorResponse('EMPTY_RESPONSE', 'nothing came back again'),
      textResponse('never'),
    ])
    const agent = await h.run('hi', { retry: { initialDelayMs: 0 } })
    expect(h.model.callCount).toBe(2)
    expect(dataOf(agent.session, 'request/retry')).toHaveLength(1)
    expect(lastTurnEnd(agent.session)).toEqual({
      kind: 'error',
      failure: { code: 'EMPTY_RESPONSE', message: 'nothing came back again' },
    })
    expect(h.errors.map((error) => error.code)).toEqual(['EMPTY_RESPONSE'])
  })

  it('a Retry-After of any size waits at most maxDelayMs, and the event records the capped delay', async () => {
    const h = await createHarness([
      errorResponse('RATE_LIMIT', 'come back tomorrow', { retryAfterMs: 86_400_000 }),
      textResponse('ok'),
    ])
    const agent = await h.run('hi', { retry: { initialDelayMs: 0, maxDelayMs: 5 } })
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(dataOf<{ delayMs: number }>(agent.session, 'request/retry').map((e) => e.delayMs)).toEqual([5])
  })

  it('a listener asking for an Infinity delay fails the turn as a listener failure, logging no such delay', async () => {
    const h = await createHarness([errorResponse('SERVER', 'oops'), textResponse('never')])
    h.app.on('agent/request-error', async () => ({ kind: 'retry', delayMs: Number.POSITIVE_INFINITY }))
    const agent = await h.run('hi')
    expect(h.model.callCount).toBe(1)
    expect(dataOf(agent.session, 'request/retry')).toEqual([])
    expect(h.errors.map((error) => error.code)).toEqual(['LISTENER_FAILED'])
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
