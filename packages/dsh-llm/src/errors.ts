import { redact, redactError } from './redact.ts'

/** Stable error codes of the LLM layer. Route on these, never on message text. */
export const LlmErrorCode = {
  AUTH: 'AUTH',
  RATE_LIMIT: 'RATE_LIMIT',
  SERVER: 'SERVER',
  TIMEOUT: 'TIMEOUT',
  TRANSPORT: 'TRANSPORT',
  ABORTED: 'ABORTED',
  CONTEXT_WINDOW_EXCEEDED: 'CONTEXT_WINDOW_EXCEEDED',
  INVALID_REQUEST: 'INVALID_REQUEST',
  MALFORMED_RESPONSE: 'MALFORMED_RESPONSE',
  NO_ADAPTER: 'NO_ADAPTER',
  DUPLICATE_ADAPTER: 'DUPLICATE_ADAPTER',
  ADAPTER_THREW: 'ADAPTER_THREW',
  SCRIPT_EXHAUSTED: 'SCRIPT_EXHAUSTED',
  INVALID_OPTIONS: 'INVALID_OPTIONS',
  /** An `llm/stream` listener (middleware) threw; the error names its plugin. */
  STREAM_LISTENER_FAILED: 'STREAM_LISTENER_FAILED',
  /** The account is out of quota or credit (e.g. a 429 `insufficient_quota`, a 402): waiting does not help. */
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  /** The provider does not know the requested model. */
  MODEL_NOT_FOUND: 'MODEL_NOT_FOUND',
  /** The endpoint itself was not found (a wrong base URL or path). */
  NOT_FOUND: 'NOT_FOUND',
  /** The provider refused a request parameter or value it does not support. */
  UNSUPPORTED_PARAMETER: 'UNSUPPORTED_PARAMETER',
  /** A 409: the provider reported a conflicting concurrent operation; worth retrying. */
  CONFLICT: 'CONFLICT',
  /** The model answered with no text, no reasoning and no tool call. */
  EMPTY_RESPONSE: 'EMPTY_RESPONSE',
} as const

/** One of the built-in LLM error codes. Other packages define their own codes as plain strings. */
export type LlmErrorCode = (typeof LlmErrorCode)[keyof typeof LlmErrorCode]

/**
 * A provider or transport failure as data: serializable, so it can travel in a `finish` chunk and be
 * recorded in the session log.
 */
export interface LlmFailure {
  readonly message: string
  readonly code: LlmErrorCode | (string & {})
  /** HTTP status, when the failure came from an HTTP response. */
  readonly status?: number
  /** How long the provider asked us to wait before retrying, in milliseconds. */
  readonly retryAfterMs?: number
  /** The provider's request id, when it sent one. */
  readonly requestId?: string
  /** The provider's own error code or finish reason (e.g. `insufficient_quota`), when it sent one. */
  readonly providerCode?: string
}

/**
 * The one base class of every error this library throws. `code` is stable; `cause` is the origin.
 * The message and the `cause` chain are redacted (`redact`, `redactError`) as the error is made,
 * so no credential reaches a log, a terminal or a bug report through an error.
 */
export class HarnessError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(redact(message), options?.cause === undefined ? undefined : { cause: redactError(options.cause) })
    this.name = 'HarnessError'
    this.code = code
  }
}

/** An error carrying an `LlmFailure`, for callers that want an exception rather than a chunk. */
export class LlmError extends HarnessError {
  readonly failure: LlmFailure
  constructor(failure: LlmFailure, options?: { cause?: unknown }) {
    super(failure.code, failure.message, options)
    this.name = 'LlmError'
    this.failure = failure
  }
}

/**
 * Builds an `LlmFailure`, dropping absent optional fields so the value stays plain JSON. The
 * message, request id and provider code are redacted (`redact`): a failure carries no credential.
 */
export function llmFailure(
  code: LlmFailure['code'],
  message: string,
  extra: {
    status?: number | undefined
    retryAfterMs?: number | undefined
    requestId?: string | undefined
    providerCode?: string | undefined
  } = {},
): LlmFailure {
  const failure: { -readonly [K in keyof LlmFailure]: LlmFailure[K] } = { message: redact(message), code }
  if (extra.status !== undefined) failure.status = extra.status
  if (extra.retryAfterMs !== undefined) failure.retryAfterMs = extra.retryAfterMs
  if (extra.requestId !== undefined) failure.requestId = redact(extra.requestId)
  if (extra.providerCode !== undefined) failure.providerCode = redact(extra.providerCode)
  return Object.freeze(failure)
}
