import { HarnessError, llmFailure, type RetryOptions, resolveRetryPolicy } from 'dsh-llm'
import { describe, expect, it } from 'vitest'

const server = llmFailure('SERVER', '502 bad gateway', { status: 502 })

function optionError(options: RetryOptions): { code: string; message: string } {
  try {
    resolveRetryPolicy(options)
  } catch (error) {
    if (error instanceof HarnessError) return { code: error.code, message: error.message }
    throw error
  }
  throw new Error('expected resolveRetryPolicy to throw')
}

describe('resolveRetryPolicy', () => {
  it('has documented, frozen defaults', () => {
    const policy = resolveRetryPolicy()
    expect(policy).toMatchObject({
      maxAttempts: 3,
      initialDelayMs: 500,
      maxDelayMs: 30_000,
      backoffFactor: 2,
      jitter: 0,
      retryableCodes: ['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'CONFLICT', 'EMPTY_RESPONSE'],
      maxAttemptsByCode: { EMPTY_RESPONSE: 2 },
    })
    expect(Object.isFrozen(policy)).toBe(true)
    expect(Object.isFrozen(policy.retryableCodes)).toBe(true)
  })

  it('backs off exponentially and stops after the last attempt', () => {
    const policy = resolveRetryPolicy({
      maxAttempts: 5,
      initialDelayMs: 100,
      backoffFactor: 3,
      maxDelayMs: 1_000,
    })
    expect([1, 2, 3, 4, 5].map((attempt) => policy.delayFor(server, attempt))).toEqual([
      100,
      300,
      900,
      1_000,
      undefined,
    ])
  })

  it('does not retry codes outside retryableCodes', () => {
    const policy = resolveRetryPolicy({ retryableCodes: ['AUTH'] })
    expect(policy.delayFor(server, 1)).toBeUndefined()
    expect(policy.delayFor(llmFailure('AUTH', 'expired key'), 1)).toBe(500)
    expect(
      resolveRetryPolicy().delayFor(llmFailure('CONTEXT_WINDOW_EXCEEDED', 'too long'), 1),
    ).toBeUndefined()
  })

  it("honours the provider's retryAfterMs, capped by maxDelayMs", () => {
    const policy = resolveRetryPolicy({ maxDelayMs: 10_000 })
    expect(policy.delayFor(llmFailure('RATE_LIMIT', 'slow down', { retryAfterMs: 7_000 }), 1)).toBe(7_000)
    expect(policy.delayFor(llmFailure('RATE_LIMIT', 'slow down', { retryAfterMs: 60_000 }), 2)).toBe(10_000)
    expect(policy.delayFor(llmFailure('RATE_LIMIT', 'slow down', { retryAfterMs: 0 }), 1)).toBe(0)
  })

  it('caps a Retry-After of any size and falls back to the backoff for an unusable one (never Infinity)', () => {
    const policy = resolveRetryPolicy({ initialDelayMs: 200 })
    const asked = (retryAfterMs: number) =>
      policy.delayFor(llmFailure('RATE_LIMIT', 'x', { retryAfterMs }), 1)
    expect(asked(Number.MAX_SAFE_INTEGER)).toBe(30_000)
    expect(asked(Number.POSITIVE_INFINITY)).toBe(200)
    expect(asked(Number.NaN)).toBe(200)
    expect(asked(-5)).toBe(200)
  })

  it('requires a finite maxDelayMs, so no delay can be Infinity', () => {
    expect(optionError({ maxDelayMs: Number.POSITIVE_INFINITY }).message).toBe(
      'resolveRetryPolicy: maxDelayMs must be a finite number >= initialDelayMs (500), got Infinity',
    )
  })

  it('retries an empty response once by default, then gives up', () => {
    const empty = llmFailure('EMPTY_RESPONSE', 'nothing')
    const policy = resolveRetryPolicy()
    expect([1, 2].map((attempt) => policy.delayFor(empty, attempt))).toEqual([500, undefined])
    expect(resolveRetryPolicy({ maxAttemptsByCode: { EMPTY_RESPONSE: 3 } }).delayFor(empty, 2)).toBe(1_000)
    expect(resolveRetryPolicy({ maxAttempts: 1 }).delayFor(empty, 1)).toBeUndefined()
  })

  it('applies jitter only when asked, through the injected random source', () => {
    const policy = resolveRetryPolicy({ jitter: 0.5, random: () => 0.5, initialDelayMs: 1_000 })
    expect(policy.delayFor(server, 1)).toBe(750)
    expect(policy.delayFor(llmFailure('RATE_LIMIT', 'x', { retryAfterMs: 1_000 }), 1)).toBe(1_000)
  })

  it('raises maxDelayMs to initialDelayMs when only the latter is given above the default cap', () => {
    expect(resolveRetryPolicy({ initialDelayMs: 60_000 }).maxDelayMs).toBe(60_000)
  })

  it('rejects invalid options with INVALID_OPTIONS naming the option and value', () => {
    const prefix = 'resolveRetryPolicy: '
    expect(optionError({ maxAttempts: 0 })).toEqual({
      code: 'INVALID_OPTIONS',
      message: `${prefix}maxAttempts must be an integer >= 1, got 0`,
    })
    expect(optionError({ maxAttempts: 1.5 }).message).toBe(
      `${prefix}maxAttempts must be an integer >= 1, got 1.5`,
    )
    expect(optionError({ initialDelayMs: -1 }).message).toBe(
      `${prefix}initialDelayMs must be a finite number >= 0, got -1`,
    )
    expect(optionError({ initialDelayMs: 100, maxDelayMs: 50 }).message).toBe(
      `${prefix}maxDelayMs must be a finite number >= initialDelayMs (100), got 50`,
    )
    expect(optionError({ backoffFactor: 0.5 }).message).toBe(
      `${prefix}backoffFactor must be a finite number >= 1, got 0.5`,
    )
    expect(optionError({ maxAttempts: Number.NaN }).message).toBe(
      `${prefix}maxAttempts must be an integer >= 1, got NaN`,
    )
    expect(optionError({ jitter: 2 }).message).toBe(`${prefix}jitter must be a number in [0, 1], got 2`)
    expect(optionError({ retryableCodes: ['SERVER', ''] }).message).toBe(
      `${prefix}retryableCodes must be an array of non-empty code strings, got ["SERVER",""]`,
    )
    expect(optionError({ retryableCodes: 'SERVER' as unknown as string[] }).message).toBe(
      `${prefix}retryableCodes must be an array of non-empty code strings, got "SERVER"`,
    )
    expect(optionError({ maxAtempts: 2 } as RetryOptions).message).toBe(
      `${prefix}options must be one of maxAttempts, initialDelayMs, maxDelayMs, backoffFactor, retryableCodes, maxAttemptsByCode, jitter, random, got "maxAtempts"`,
    )
  })

  it('rejects an attempt number that is not a positive integer', () => {
    expect(() => resolveRetryPolicy().delayFor(server, 0)).toThrow(
      new TypeError('RetryPolicy.delayFor: attempt must be an integer >= 1, got 0'),
    )
  })

  it('rejects a maxAttemptsByCode entry that is not an integer >= 1', () => {
    expect(optionError({ maxAttemptsByCode: { EMPTY_RESPONSE: 0 } }).message).toBe(
      'resolveRetryPolicy: maxAttemptsByCode.EMPTY_RESPONSE must be an integer >= 1, got 0',
    )
  })

  it('treats undefined options as absent', () => {
    expect(resolveRetryPolicy({ maxAttempts: undefined }).maxAttempts).toBe(3)
  })
})
