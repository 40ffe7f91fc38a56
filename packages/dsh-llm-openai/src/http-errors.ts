/**
 * Error classification: a non-2xx response becomes an `LlmFailure` whose code follows the provider's
 * own error code first and the HTTP status second.
 */
import { isRecord, LlmErrorCode, type LlmFailure, llmFailure } from 'dsh-llm'
import { type CallContext, where } from './errors.ts'
import { type JsonRecord, stringField, tryParseJson } from './json.ts'
import { headerRequestId } from './request-id.ts'
import { retryAfterMs } from './retry-after.ts'

/** Provider codes that mean the account is out of money or quota: waiting does not help. */
const QUOTA_CODES = new Set([
  'insufficient_quota',
  'quota_exceeded',
  'billing_hard_limit_reached',
  'insufficient_balance',
  'arrearage',
  '1113',
])
/** Provider codes of a bad or missing key. */
const AUTH_CODES = new Set([
  'invalid_api_key',
  'authentication_error',
  'invalid_authentication',
  'unauthenticated',
  'permission_denied',
  'api_key_invalid',
  'invalidapikey',
])
const MODEL_CODES = new Set(['model_not_found', 'modelnotfound', 'model_not_available', 'deploymentnotfound'])
const UNSUPPORTED_CODES = new Set(['unsupported_parameter', 'unsupported_value'])

const CONTEXT_LENGTH =
  /context[ _-]?(length|window|size)|maximum context|prompt is too long|too many tokens|exceeds? the (model'?s? )?(maximum|context)/i
const BAD_KEY = /api key not valid|invalid api key|incorrect api key|invalid_api_key/i
const MODEL_MISSING =
  /model\b.*\b(not found|does not exist|not exist|is not available|unknown)|unknown model|no such model/i
const UNSUPPORTED =
  /unsupported (parameter|value)|unrecognized request argument|not supported (with|by) this model|extra inputs are not permitted/i

/** The longest part of a non-JSON body quoted in a message. */
const BODY_PREVIEW_CHARS = 120

/** The pieces of a response `httpFailure` needs. */
export interface HttpResponseHead {
  readonly status: number
  readonly statusText: string
  readonly headers: Headers
}

/**
 * Maps a non-2xx response. The message names the provider, model, status and provider code, then
 * quotes the provider's message (`error.message`, `error` as a string, `message`, or `detail`); an
 * HTML or other non-JSON body is summarised as its content type and first bytes. The request id
 * comes from the headers (`REQUEST_ID_HEADERS`), else the body's `id` / `request_id`.
 *
 * Codes, first match wins: a quota code (or 402) `QUOTA_EXCEEDED`; a key code, a bad-key message or
 * 401/403 `AUTH`; a model code, or a 404 that speaks of the model, `MODEL_NOT_FOUND`; a context-length
 * code or message `CONTEXT_WINDOW_EXCEEDED`; an unsupported-parameter code or message
 * `UNSUPPORTED_PARAMETER`; 408 `TIMEOUT`; 409 `CONFLICT`; 429 `RATE_LIMIT`; 404 `NOT_FOUND`; 5xx
 * `SERVER`; any other status `INVALID_REQUEST`. `retryAfterMs` is read on 408, 409, 429 and 5xx.
 */
export function httpFailure(
  head: HttpResponseHead,
  bodyText: string,
  context: CallContext,
  now: number = Date.now(),
): LlmFailure {
  const { status, headers } = head
  const parsed = tryParseJson(bodyText)
  const record = firstRecord(parsed)
  const error = record?.error
  const errorRecord = firstRecord(error) ?? {}
  const providerMessage =
    stringField(errorRecord.message) ??
    stringField(error) ??
    stringField(record?.message) ??
    stringField(record?.detail)
  const providerCode = codeOf(errorRecord) ?? (record === undefined ? undefined : codeOf(record))
  const requestId =
    headerRequestId(headers) ??
    stringField(record?.request_id) ??
    stringField(errorRecord.request_id) ??
    stringField(record?.id)
  const code = classify(status, providerCode?.toLowerCase() ?? '', providerMessage ?? bodyText)
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500
  const said =
    providerMessage ?? (record === undefined ? undefined : preview(bodyText.replace(/\s+/g, ' ').trim()))
  const detail =
    said === undefined
      ? bodySummary(head, bodyText)
      : `${status}${providerCode === undefined ? '' : ` ${providerCode}`}: ${said}`
  const hint = code === LlmErrorCode.NOT_FOUND ? ` (POST ${context.url}; is the base URL right?)` : ''
  const id = requestId === undefined ? '' : ` [request ${requestId}]`
  return llmFailure(code, `${where(context)}: HTTP ${detail}${hint}${id}`, {
    status,
    requestId,
    providerCode,
    retryAfterMs: retryable ? retryAfterMs(headers, now) : undefined,
  })
}

function classify(status: number, code: string, message: string): string {
  if (QUOTA_CODES.has(code) || status === 402) return LlmErrorCode.QUOTA_EXCEEDED
  if (AUTH_CODES.has(code) || status === 401 || status === 403) return LlmErrorCode.AUTH
  if (status >= 400 && status < 500 && BAD_KEY.test(message)) return LlmErrorCode.AUTH
  if (MODEL_CODES.has(code) || (status === 404 && MODEL_MISSING.test(message))) {
    return LlmErrorCode.MODEL_NOT_FOUND
  }
  if (status >= 400 && status < 500 && status !== 429) {
    if (code === 'context_length_exceeded' || CONTEXT_LENGTH.test(message)) {
      return LlmErrorCode.CONTEXT_WINDOW_EXCEEDED
    }
    if (UNSUPPORTED_CODES.has(code) || UNSUPPORTED.test(message)) return LlmErrorCode.UNSUPPORTED_PARAMETER
  }
  if (status === 408) return LlmErrorCode.TIMEOUT
  if (status === 409) return LlmErrorCode.CONFLICT
  if (status === 429) return LlmErrorCode.RATE_LIMIT
  if (status === 404) return LlmErrorCode.NOT_FOUND
  if (status >= 500) return LlmErrorCode.SERVER
  return LlmErrorCode.INVALID_REQUEST
}

/** A JSON object, or the first element of a JSON array of objects (Gemini wraps errors in one). */
function firstRecord(value: unknown): JsonRecord | undefined {
  if (isRecord(value)) return value
  if (Array.isArray(value) && isRecord(value[0])) return value[0]
  return undefined
}

/** The provider's string code: `code`, else `status` (Gemini), else a specific `type`. */
function codeOf(record: JsonRecord): string | undefined {
  const code = stringField(record.code) ?? stringField(record.status)
  if (code !== undefined && code !== '') return code
  const type = stringField(record.type)
  // OpenAI's `type` is often the generic class; it is the code only when nothing better exists.
  return type === undefined || type === '' ? undefined : type
}

/**
 * `"<status> <status text>"`, plus the content type and first characters of a non-empty body. Markup
 * (an HTML error page) is reduced to its text first, so the message quotes words, not tags.
 */
function bodySummary(head: HttpResponseHead, bodyText: string): string {
  const statusLine = `${head.status} ${head.statusText}`.trim()
  const type = head.headers.get('content-type') ?? 'no content type'
  const markup = /html|xml/i.test(type) || bodyText.trimStart().startsWith('<')
  const text = (markup ? markupText(bodyText) : bodyText).replace(/\s+/g, ' ').trim()
  if (text === '') return statusLine
  return `${statusLine}, ${type} body: ${preview(text)}`
}

function markupText(html: string): string {
  return html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]*>/g, ' ')
}

function preview(text: string): string {
  return text.length > BODY_PREVIEW_CHARS ? `${text.slice(0, BODY_PREVIEW_CHARS)}…` : text
}
