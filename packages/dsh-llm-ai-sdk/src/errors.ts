/**
 * Failure mapping, the one place an AI SDK error (a thrown `APICallError` or another spec error, or
 * a stream's `error` part) becomes an `LlmFailure`.
 */
import { APICallError } from '@ai-sdk/provider'
import { isRecord, LlmErrorCode, type LlmFailure, llmFailure } from 'dsh-llm'

/** Codes this adapter adds to `LlmErrorCode`. */
export const AiSdkErrorCode = {
  /** The provider stopped the output for safety, a refusal or recitation (finish `content-filter`). */
  CONTENT_FILTERED: 'CONTENT_FILTERED',
  /** The provider ended with a finish reason dsh has no kind for (`other`, `error`). */
  UNKNOWN_FINISH_REASON: 'UNKNOWN_FINISH_REASON',
} as const

/** Response headers that carry a request id, tried in this order. */
export const REQUEST_ID_HEADERS: readonly string[] = Object.freeze([
  'request-id',
  'x-request-id',
  'x-amzn-requestid',
  'x-goog-request-id',
  'x-kong-request-id',
  'cf-ray',
])

/** The longest wait reported, in ms (one day). */
export const MAX_RETRY_AFTER_MS = 86_400_000

/** Where a failure happened, for messages. */
export interface FailureContext {
  readonly label: string
  readonly requestId: string | undefined
}

/** Provider error types (Anthropic `error.type`, Google `error.status`, ...) and their codes. */
const PROVIDER_TYPES: Readonly<Record<string, string>> = {
  overloaded_error: LlmErrorCode.SERVER,
  api_error: LlmErrorCode.SERVER,
  rate_limit_error: LlmErrorCode.RATE_LIMIT,
  authentication_error: LlmErrorCode.AUTH,
  permission_error: LlmErrorCode.AUTH,
  invalid_request_error: LlmErrorCode.INVALID_REQUEST,
  not_found_error: LlmErrorCode.NOT_FOUND,
  request_too_large: LlmErrorCode.INVALID_REQUEST,
  RESOURCE_EXHAUSTED: LlmErrorCode.RATE_LIMIT,
  UNAVAILABLE: LlmErrorCode.SERVER,
  INTERNAL: LlmErrorCode.SERVER,
  UNAUTHENTICATED: LlmErrorCode.AUTH,
  PERMISSION_DENIED: LlmErrorCode.AUTH,
  INVALID_ARGUMENT: LlmErrorCode.INVALID_REQUEST,
  ThrottlingException: LlmErrorCode.RATE_LIMIT,
  ServiceUnavailableException: LlmErrorCode.SERVER,
  ModelStreamErrorException: LlmErrorCode.SERVER,
  InternalServerException: LlmErrorCode.SERVER,
  ValidationException: LlmErrorCode.INVALID_REQUEST,
  AccessDeniedException: LlmErrorCode.AUTH,
  insufficient_quota: LlmErrorCode.QUOTA_EXCEEDED,
}

const CONTEXT_LENGTH =
  /prompt is too long|context[ _-]?(length|window)|maximum context|input is too long|too many (input )?tokens|exceeds the (maximum|context)/i

/**
 * Maps an error a call threw or a stream's `error` part carried. An `APICallError` by its status
 * first: 401/403 `AUTH`, 402 `QUOTA_EXCEEDED`, 404 `MODEL_NOT_FOUND` when the message speaks of the
 * model else `NOT_FOUND`, 408 `TIMEOUT`, 409 `CONFLICT`, 429 `RATE_LIMIT` (`QUOTA_EXCEEDED` for an
 * `insufficient_quota` body), 5xx and Anthropic's 529 `overloaded_error` `SERVER` (retryable), a
 * bad-key message (Gemini answers 400 "API key not valid") `AUTH`, a
 * context-length message `CONTEXT_WINDOW_EXCEEDED`, any other status `INVALID_REQUEST`; no status at
 * all (the connection failed) `TRANSPORT`. An error part's object by its provider type
 * (`overloaded_error` → `SERVER`, `rate_limit_error` → `RATE_LIMIT`, ...). A JSON or type
 * validation error `MALFORMED_RESPONSE`. Anything else `TRANSPORT` when it is a network `TypeError`,
 * else `SERVER`. The failure keeps the status, `Retry-After` (`retry-after-ms` or `retry-after`,
 * seconds or HTTP date, bounded), the request id (headers, else the context's) and the provider's
 * own error type as `providerCode`.
 */
export function failureOf(error: unknown, context: FailureContext, now: number = Date.now()): LlmFailure {
  if (APICallError.isInstance(error)) return apiFailure(error, context, now)
  const record = recordOf(error)
  const inner = recordOf(record?.error) ?? record
  const providerCode = providerCodeOf(inner)
  const message = stringOf(inner?.message) ?? (error instanceof Error ? error.message : describe(error))
  const name = error instanceof Error ? error.name : ''
  let code: string
  if (providerCode !== undefined && Object.hasOwn(PROVIDER_TYPES, providerCode)) {
    code = PROVIDER_TYPES[providerCode] as string
  } else if (/JSONParseError|TypeValidationError|InvalidResponseDataError/.test(name)) {
    code = LlmErrorCode.MALFORMED_RESPONSE
  } else if (error instanceof TypeError) {
    code = LlmErrorCode.TRANSPORT
  } else {
    code = LlmErrorCode.SERVER
  }
  if (code === LlmErrorCode.INVALID_REQUEST && CONTEXT_LENGTH.test(message))
    code = LlmErrorCode.CONTEXT_WINDOW_EXCEEDED
  const shown = providerCode === undefined ? '' : ` ${providerCode}`
  return llmFailure(code, `${context.label} failed mid-stream${shown}: ${message}`, {
    requestId: context.requestId,
    providerCode,
  })
}

function apiFailure(error: APICallError, context: FailureContext, now: number): LlmFailure {
  const status = error.statusCode
  const headers = lowerCased(error.responseHeaders)
  const body = parseJson(error.responseBody)
  const top = recordOf(body) ?? recordOf(Array.isArray(body) ? body[0] : undefined)
  // `{error: {...}}` (Anthropic, OpenAI, Google) or a top-level error object (Mistral's `object: 'error'`).
  const inner = recordOf(top?.error) ?? (top?.object === 'error' ? top : undefined)
  const providerCode = providerCodeOf(inner) ?? stringOf(headers['x-amzn-errortype'])?.split(':')[0]
  const message =
    error.message.trim() !== ''
      ? error.message
      : (stringOf(recordOf(body)?.message) ?? `HTTP ${status ?? 'error'}`)
  const requestId = headerRequestId(headers) ?? stringOf(recordOf(body)?.request_id) ?? context.requestId
  const code = codeOf(status, providerCode, message)
  const retryable =
    code === LlmErrorCode.RATE_LIMIT ||
    code === LlmErrorCode.SERVER ||
    code === LlmErrorCode.TIMEOUT ||
    code === LlmErrorCode.CONFLICT
  const where = status === undefined ? '' : ` with HTTP ${status}`
  const kind = providerCode === undefined ? '' : ` ${providerCode}`
  return llmFailure(code, `${context.label} answered${where}${kind}: ${message}`, {
    status,
    retryAfterMs: retryable ? retryAfterMs(headers, now) : undefined,
    requestId,
    providerCode,
  })
}

/**
 * The provider's own error code: a string `code` (OpenAI's `rate_limit_exceeded`, more precise than
 * its `type`), else `type` (Anthropic's `overloaded_error`), else `status` (Google's
 * `RESOURCE_EXHAUSTED`).
 */
function providerCodeOf(inner: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const code = typeof inner?.code === 'string' && inner.code !== '' ? inner.code : undefined
  return code ?? stringOf(inner?.type) ?? stringOf(inner?.status)
}

const BAD_KEY = /api key not valid|invalid api key|incorrect api key|invalid x-api-key/i

function codeOf(status: number | undefined, providerCode: string | undefined, message: string): string {
  if (status === undefined) return LlmErrorCode.TRANSPORT
  if (providerCode === 'insufficient_quota' || status === 402) return LlmErrorCode.QUOTA_EXCEEDED
  if (status === 401 || status === 403 || BAD_KEY.test(message)) return LlmErrorCode.AUTH
  if (status === 404) return /model/i.test(message) ? LlmErrorCode.MODEL_NOT_FOUND : LlmErrorCode.NOT_FOUND
  if (status === 408) return LlmErrorCode.TIMEOUT
  if (status === 409) return LlmErrorCode.CONFLICT
  if (status === 429) return LlmErrorCode.RATE_LIMIT
  if (status >= 500) return LlmErrorCode.SERVER
  if (CONTEXT_LENGTH.test(message)) return LlmErrorCode.CONTEXT_WINDOW_EXCEEDED
  return LlmErrorCode.INVALID_REQUEST
}

/** The first non-empty request id header (`REQUEST_ID_HEADERS`) of lower-cased `headers`. */
export function headerRequestId(headers: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers[name]?.trim()
    if (value !== undefined && value !== '') return value
  }
  return undefined
}

/** `headers` with lower-cased names. */
export function lowerCased(
  headers: Readonly<Record<string, string | undefined>> | undefined,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value
  return out
}

const DECIMAL = /^\d+(\.\d+)?$/

/** How long the provider asked to wait, in ms, bounded to `MAX_RETRY_AFTER_MS`; or `undefined`. */
export function retryAfterMs(
  headers: Readonly<Record<string, string | undefined>>,
  now: number,
): number | undefined {
  const ms = headers['retry-after-ms']?.trim()
  if (ms !== undefined && DECIMAL.test(ms)) return bounded(Number(ms))
  const value = headers['retry-after']?.trim()
  if (value === undefined || value === '') return undefined
  if (DECIMAL.test(value)) return bounded(Number(value) * 1000)
  if (!/[a-z]{3}/i.test(value)) return undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : bounded(date - now)
}

function bounded(ms: number): number {
  if (!Number.isFinite(ms)) return MAX_RETRY_AFTER_MS
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.round(ms)))
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function recordOf(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return isRecord(value) ? value : undefined
}

function stringOf(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value)
  return typeof value === 'string' && value !== '' ? value : undefined
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
