/** The adapter factory for OpenAI-compatible Chat Completions endpoints. */
import {
  HarnessError,
  isSecretHeader,
  type LlmAdapter,
  LlmErrorCode,
  redact,
  registerSecret,
  registerUrlSecrets,
} from 'dsh-llm'
import { type CallConfig, streamCall } from './call.ts'
import type { OpenAiCompatibleOptions } from './types.ts'
import { joinPath } from './url.ts'
import { defaultWarn } from './warnings.ts'

/** The inactivity timeout used when `timeoutMs` is not given: five minutes. */
export const DEFAULT_TIMEOUT_MS = 300_000

/**
 * Creates an `LlmAdapter` that streams `POST ${baseURL}/chat/completions` over HTTP + SSE with the
 * given (or global) `fetch`. Options are validated here: a missing `baseURL` or one that is not an
 * absolute http(s) URL, an `apiKey` given but empty (leave it out for a server that needs no key), a
 * `timeoutMs` that is not a positive finite number, or a missing `fetch` throws a `HarnessError`
 * with code `INVALID_OPTIONS`. A query string of `baseURL` (`?api-version=...`) stays on the URL,
 * after the joined path.
 *
 * The credentials it is given — `apiKey`, the values of secret headers (`authorization`, `api-key`,
 * `x-api-key`, ...), the base URL's userinfo and secret query values — are registered with dsh-llm's
 * `registerSecret`, and the base URL names the provider only in its redacted form: no failure,
 * warning or error message of the adapter carries them.
 *
 * The adapter keeps the `LlmAdapter` failure contract strictly: `stream` never throws; every provider,
 * transport, timeout, abort or protocol failure ends the stream with a `finish` chunk of kind `error`
 * (or `aborted` when `request.signal` fired) whose failure carries the provider's message, the HTTP
 * status and the request id where known.
 */
export function openAiCompatible(options: OpenAiCompatibleOptions): LlmAdapter {
  const config = resolveConfig(options)
  return { stream: (request) => streamCall(request, config) }
}

function resolveConfig(options: OpenAiCompatibleOptions): CallConfig {
  if (typeof options?.baseURL !== 'string' || options.baseURL === '') {
    throw invalid('baseURL is required (the API root, e.g. "https://api.openai.com/v1")')
  }
  if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || options.apiKey.trim() === '')) {
    throw invalid('apiKey is empty; pass the key, or leave apiKey out for a server that needs none')
  }
  const base = options.baseURL.replace(/\/+$/, '')
  if (!/^https?:\/\/[^/]/i.test(base) || !URL.canParse(base)) {
    throw invalid(`baseURL must be an absolute http(s) URL, got ${JSON.stringify(options.baseURL)}`)
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw invalid(`timeoutMs must be a positive number of milliseconds, got ${String(options.timeoutMs)}`)
  }
  const fetchImpl = options.fetch ?? globalThis.fetch
  if (typeof fetchImpl !== 'function') throw invalid('no fetch: pass options.fetch on a runtime without one')
  const headers = new Headers({ 'content-type': 'application/json', accept: 'text/event-stream' })
  if (options.apiKey !== undefined) {
    headers.set('authorization', `Bearer ${options.apiKey}`)
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value)
  registerSecret(options.apiKey)
  for (const [name, value] of headers) {
    if (!isSecretHeader(name)) continue
    registerSecret(value)
    registerSecret(value.replace(/^(bearer|basic|token)\s+/i, ''))
  }
  registerUrlSecrets(base)
  const label = options.name ?? redact(base)
  if (typeof label !== 'string' || label === '')
    throw invalid(`name must be a non-empty string, got ${JSON.stringify(options.name)}`)
  const warn = options.onWarning ?? defaultWarn
  if (typeof warn !== 'function') throw invalid('onWarning must be a function')
  return {
    label,
    warn: (warning) => warn({ ...warning, message: redact(warning.message) }),
    url: joinPath(base, 'chat/completions'),
    headers: [...headers.entries()],
    timeoutMs,
    fetch: fetchImpl,
    policy: {
      reasoningReplay: options.reasoningReplay ?? 'omit',
      sendReasoningEffort: options.sendReasoningEffort ?? true,
      maxTokensField: options.maxTokensField ?? 'max_tokens',
      includeUsage: options.includeUsage ?? true,
    },
    extraBody: options.extraBody,
  }
}

function invalid(message: string): HarnessError {
  return new HarnessError(LlmErrorCode.INVALID_OPTIONS, `openAiCompatible: ${message}`)
}
