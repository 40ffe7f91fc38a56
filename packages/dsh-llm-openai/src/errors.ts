/** Error mapping: HTTP responses and thrown transport errors become `LlmFailure` values. */
import { assertNever, LlmErrorCode, type LlmFailure, llmFailure } from 'dsh-llm'
import { isRecord, numberField, stringField, tryParseJson } from './json.ts'

/** Codes this package adds to `LlmErrorCode`. */
export const OpenAiErrorCode = {
  /** The provider withheld or cut the output (`finish_reason: "content_filter"`). */
  CONTENT_FILTERED: 'CONTENT_FILTERED',
} as const

const CONTEXT_LENGTH =
  /context[ _-]?(length|window|size)|maximum context|prompt is too long|too many tokens|exceeds? the (model'?s? )?(maximum|context)/i

/**
 * Maps a non-2xx response to a failure carrying the provider's own message (`error.message`,
 * `error` as a string, or `message` of a JSON body; else the trimmed body text; else the status line),
 * the status, and the request id (`x-request-id` header, else the body's `id` / `request_id`).
 * Codes: 401/403 `AUTH`; 429 `RATE_LIMIT` with `retryAfterMs` from `Retry-After`; 5xx `SERVER`; another
 * 4xx whose message or `error.code` speaks of the context length `CONTEXT_WINDOW_EXCEEDED`, otherwise
 * `INVALID_REQUEST`.
 */
export function httpFailure(
  status: number,
  statusText: string,
  headers: Headers,
  bodyText: string,
  now: number = Date.now(),
): LlmFailure {
  const body = tryParseJson(bodyText)
  const record = isRecord(body) ? body : {}
  const error = record.error
  const errorRecord = isRecord(error) ? error : {}
  const trimmed = bodyText.trim()
  const message =
    stringField(errorRecord.message) ??
    stringField(error) ??
    stringField(record.message) ??
    (trimmed === '' ? `HTTP ${status} ${statusText}`.trim() : trimmed.slice(0, 1000))
  const requestId =
    headers.get('x-request-id') ?? stringField(record.id) ?? stringField(record.request_id) ?? undefined
  const providerCode = stringField(errorRecord.code) ?? stringField(errorRecord.type) ?? ''
  const extra = { status, requestId }
  if (status === 401 || status === 403) return llmFailure(LlmErrorCode.AUTH, message, extra)
  if (status === 429) {
    return llmFailure(LlmErrorCode.RATE_LIMIT, message, {
      ...extra,
      retryAfterMs: retryAfterMs(headers, now),
    })
  }
  if (status >= 500) return llmFailure(LlmErrorCode.SERVER, message, extra)
  if (status >= 400 && (providerCode === 'context_length_exceeded' || CONTEXT_LENGTH.test(message))) {
    return llmFailure(LlmErrorCode.CONTEXT_WINDOW_EXCEEDED, message, extra)
  }
  if (status >= 400) return llmFailure(LlmErrorCode.INVALID_REQUEST, message, extra)
  return llmFailure(LlmErrorCode.SERVER, message, extra)
}

/**
 * How long the provider asked us to wait, in ms: `retry-after-ms` when present, else `Retry-After` as
 * delay-seconds (fractions allowed) or an HTTP date (a past date gives 0). `undefined` when neither
 * header holds a usable value.
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms')
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.round(Number(ms))
  const value = headers.get('retry-after')?.trim()
  if (value === undefined || value === '') return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Why a call's controller fired, if it did. */
export type CallCause = 'aborted' | 'timeout' | undefined

/**
 * Maps an exception thrown by `fetch` or a body read: the caller's abort becomes `ABORTED`, the
 * inactivity timer `TIMEOUT`, anything else `TRANSPORT` with the error's message and its cause's.
 */
export function thrownFailure(
  error: unknown,
  cause: CallCause,
  context: { readonly url: string; readonly timeoutMs: number; readonly requestId?: string | undefined },
): LlmFailure {
  const extra = { requestId: context.requestId }
  switch (cause) {
    case 'aborted':
      return llmFailure(
        LlmErrorCode.ABORTED,
        `the request to ${context.url} was aborted by its signal`,
        extra,
      )
    case 'timeout':
      return llmFailure(
        LlmErrorCode.TIMEOUT,
        `no data from ${context.url} for ${context.timeoutMs} ms (timeoutMs)`,
        extra,
      )
    case undefined:
      return llmFailure(LlmErrorCode.TRANSPORT, `${context.url}: ${describe(error)}`, extra)
    default:
      return assertNever(cause, 'thrownFailure')
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause: unknown = error.cause
  if (cause instanceof Error && cause.message !== '' && cause.message !== error.message) {
    return `${error.message}: ${cause.message}`
  }
  const code = isRecord(cause) ? (stringField(cause.code) ?? numberField(cause.code)) : undefined
  return code === undefined ? error.message : `${error.message} (${code})`
}
