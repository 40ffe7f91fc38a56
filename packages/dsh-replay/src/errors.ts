import { LlmError, llmFailure } from 'dsh-llm'
import type { CanonicalRequest } from './canonical.ts'
import type { Difference } from './diff.ts'

/** Stable codes of the replay wrapper's errors. */
export const ReplayErrorCode = {
  /** A replayed request has no recorded response. */
  REPLAY_MISS: 'REPLAY_MISS',
  /** The fixture file is missing, unreadable or not a fixture. */
  FIXTURE_INVALID: 'FIXTURE_INVALID',
} as const

/** One of the replay wrapper's error codes. */
export type ReplayErrorCode = (typeof ReplayErrorCode)[keyof typeof ReplayErrorCode]

/** The recorded request closest to a missed one and how they differ. */
export interface NearestExchange {
  /** 0-based index of the exchange in the fixture. */
  readonly index: number
  /** Its fixture key (`requestKey` of its canonical request). */
  readonly key: string
  /** Where the missed request differs from it. */
  readonly differences: readonly Difference[]
}

/**
 * Thrown (before the first chunk, as the adapter contract allows) when replay finds no recording for
 * a request. It is an `LlmError`, so the runtime turns it into a terminal `finish {kind: 'error'}`
 * whose failure carries code `REPLAY_MISS` and this message; the wrapper also keeps it in `misses`.
 */
export class ReplayMissError extends LlmError {
  /** The canonical form of the request that missed. */
  readonly request: CanonicalRequest
  /** The fixture key of that request (`requestKey`). */
  readonly key: string
  /** The nearest recorded exchange, or `undefined` when the fixture is empty. */
  readonly nearest: NearestExchange | undefined
  constructor(
    message: string,
    detail: { request: CanonicalRequest; key: string; nearest?: NearestExchange },
  ) {
    super(llmFailure(ReplayErrorCode.REPLAY_MISS, message))
    this.name = 'ReplayMissError'
    this.request = detail.request
    this.key = detail.key
    this.nearest = detail.nearest
  }
}

/** A fixture file that cannot be used: missing in replay mode, not JSON, or not a fixture. */
export class ReplayFixtureError extends LlmError {
  /** The fixture's path. */
  readonly path: string
  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(llmFailure(ReplayErrorCode.FIXTURE_INVALID, message), options)
    this.name = 'ReplayFixtureError'
    this.path = path
  }
}
