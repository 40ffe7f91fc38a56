/** Retry is policy: which failures to retry, how often, and how long to wait in between. */

import { HarnessError, LlmErrorCode, type LlmFailure } from './errors.ts'
import { isRecord } from './json-record.ts'

/** Options of `resolveRetryPolicy`. Every field is optional; `undefined` means the default. */
export interface RetryOptions {
  /** Total attempts including the first, an integer >= 1. Default 3. */
  readonly maxAttempts?: number | undefined
  /** Delay before the second attempt, ms, >= 0. Default 500. */
  readonly initialDelayMs?: number | undefined
  /**
   * Upper bound of any delay, ms: finite and >= initialDelayMs. Default 30,000 (or initialDelayMs if
   * larger). A provider's `Retry-After` longer than this is cut to it.
   */
  readonly maxDelayMs?: number | undefined
  /** Growth of the delay per attempt, >= 1. Default 2. */
  readonly backoffFactor?: number | undefined
  /** Failure codes worth retrying. Default RATE_LIMIT, SERVER, TIMEOUT, TRANSPORT, CONFLICT, EMPTY_RESPONSE. */
  readonly retryableCodes?: readonly string[] | undefined
  /**
   * Per-code limits on total attempts (integers >= 1), applied on top of `maxAttempts` (the smaller
   * wins). Default `{EMPTY_RESPONSE: 2}`: an empty answer is retried once. Given, it replaces the default.
   */
  readonly maxAttemptsByCode?: Readonly<Record<string, number>> | undefined
  /**
   * Fraction in [0, 1] by which a computed backoff delay may be shortened at random. Default 0
   * (deterministic). A provider's `retryAfterMs` is never shortened.
   */
  readonly jitter?: number | undefined
  /** Source of randomness for `jitter`, returning values in [0, 1). Default `Math.random`. */
  readonly random?: (() => number) | undefined
}

/** A resolved, frozen retry policy. */
export interface RetryPolicy {
  readonly maxAttempts: number
  readonly initialDelayMs: number
  readonly maxDelayMs: number
  readonly backoffFactor: number
  readonly retryableCodes: readonly string[]
  readonly maxAttemptsByCode: Readonly<Record<string, number>>
  readonly jitter: number
  /**
   * How long to wait before retrying after `attempt` (1-based: the attempt that just failed)
   * ended with `failure`, or `undefined` when it must not be retried: the code is not retryable
   * or `attempt` was the last allowed (by `maxAttempts` or the code's `maxAttemptsByCode`). The
   * delay is `failure.retryAfterMs` when the provider sent a usable one (finite, >= 0), else
   * `initialDelayMs * backoffFactor^(attempt-1)`; either way at most `maxDelayMs`, so it is always
   * a finite number. Throws `TypeError` when `attempt` is not an integer >= 1.
   */
  delayFor(failure: LlmFailure, attempt: number): number | undefined
}

const DEFAULT_CODES: readonly string[] = Object.freeze([
  LlmErrorCode.RATE_LIMIT,
  LlmErrorCode.SERVER,
  LlmErrorCode.TIMEOUT,
  LlmErrorCode.TRANSPORT,
  LlmErrorCode.CONFLICT,
  LlmErrorCode.EMPTY_RESPONSE,
])

const DEFAULT_ATTEMPTS_BY_CODE: Readonly<Record<string, number>> = Object.freeze({
  [LlmErrorCode.EMPTY_RESPONSE]: 2,
})

const KNOWN_OPTIONS = new Set([
  'maxAttempts',
  'initialDelayMs',
  'maxDelayMs',
  'backoffFactor',
  'retryableCodes',
  'maxAttemptsByCode',
  'jitter',
  'random',
])

function invalid(option: string, requirement: string, value: unknown): HarnessError {
  const shown =
    typeof value === 'function'
      ? 'a function'
      : typeof value === 'number'
        ? String(value)
        : JSON.stringify(value)
  return new HarnessError(
    LlmErrorCode.INVALID_OPTIONS,
    `resolveRetryPolicy: ${option} must be ${requirement}, got ${shown}`,
  )
}

function numberOption(
  options: RetryOptions,
  option: 'maxAttempts' | 'initialDelayMs' | 'maxDelayMs' | 'backoffFactor' | 'jitter',
  fallback: number,
  requirement: string,
  valid: (value: number) => boolean,
): number {
  const value: unknown = options[option]
  if (value === undefined) return fallback
  if (typeof value !== 'number' || Number.isNaN(value) || !valid(value))
    throw invalid(option, requirement, value)
  return value
}

/**
 * Validates `options` and returns a frozen `RetryPolicy`. Throws `HarnessError` with code
 * `INVALID_OPTIONS`, naming the option and the value, for an unknown option or a value out of range.
 */
export function resolveRetryPolicy(options: RetryOptions = {}): RetryPolicy {
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) throw invalid('options', `one of ${[...KNOWN_OPTIONS].join(', ')}`, key)
  }
  const maxAttempts = numberOption(
    options,
    'maxAttempts',
    3,
    'an integer >= 1',
    (v) => Number.isInteger(v) && v >= 1,
  )
  const initialDelayMs = numberOption(
    options,
    'initialDelayMs',
    500,
    'a finite number >= 0',
    (v) => v >= 0 && v < Infinity,
  )
  const maxDelayMs = numberOption(
    options,
    'maxDelayMs',
    Math.max(30_000, initialDelayMs),
    `a finite number >= initialDelayMs (${initialDelayMs})`,
    (v) => v >= initialDelayMs && v < Infinity,
  )
  const backoffFactor = numberOption(
    options,
    'backoffFactor',
    2,
    'a finite number >= 1',
    (v) => v >= 1 && v < Infinity,
  )
  const jitter = numberOption(options, 'jitter', 0, 'a number in [0, 1]', (v) => v >= 0 && v <= 1)
  const random = options.random ?? Math.random
  if (typeof random !== 'function') throw invalid('random', 'a function', random)
  const retryableCodes = codesOption(options.retryableCodes)
  const maxAttemptsByCode = attemptsByCodeOption(options.maxAttemptsByCode)

  function delayFor(failure: LlmFailure, attempt: number): number | undefined {
    if (!Number.isInteger(attempt) || attempt < 1) {
      throw new TypeError(`RetryPolicy.delayFor: attempt must be an integer >= 1, got ${attempt}`)
    }
    if (attempt >= maxAttempts || !retryableCodes.includes(failure.code)) return undefined
    const codeLimit = Object.hasOwn(maxAttemptsByCode, failure.code)
      ? maxAttemptsByCode[failure.code]
      : undefined
    if (codeLimit !== undefined && attempt >= codeLimit) return undefined
    const asked = failure.retryAfterMs
    if (typeof asked === 'number' && asked >= 0 && asked < Infinity) return Math.min(asked, maxDelayMs)
    const backoff = Math.min(initialDelayMs * backoffFactor ** (attempt - 1), maxDelayMs)
    return jitter === 0 ? backoff : backoff * (1 - jitter * random())
  }

  return Object.freeze({
    maxAttempts,
    initialDelayMs,
    maxDelayMs,
    backoffFactor,
    retryableCodes,
    maxAttemptsByCode,
    jitter,
    delayFor,
  })
}

function codesOption(value: unknown): readonly string[] {
  if (value === undefined) return DEFAULT_CODES
  if (!Array.isArray(value) || !value.every((code) => typeof code === 'string' && code !== '')) {
    throw invalid('retryableCodes', 'an array of non-empty code strings', value)
  }
  return Object.freeze([...value])
}

function attemptsByCodeOption(value: unknown): Readonly<Record<string, number>> {
  if (value === undefined) return DEFAULT_ATTEMPTS_BY_CODE
  if (!isRecord(value)) {
    throw invalid('maxAttemptsByCode', 'an object of code → attempts', value)
  }
  const out: Record<string, number> = {}
  for (const [code, limit] of Object.entries(value)) {
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
      throw invalid(`maxAttemptsByCode.${code}`, 'an integer >= 1', limit)
    }
    out[code] = limit
  }
  return Object.freeze(out)
}
