/** What a `request/retry` event records about the failure: JSON-safe fields only. */
import { type LlmFailure, llmFailure } from 'dsh-llm'

/**
 * `failure` as the log can hold it: `code` and `message`, plus `status`, `retryAfterMs` (finite,
 * >= 0), `requestId` and `providerCode` when they have the right type. A value an adapter got wrong
 * (an `Infinity` retry delay, a numeric request id) is left out rather than written as non-JSON.
 */
export function loggableFailure(failure: LlmFailure): LlmFailure {
  return llmFailure(String(failure.code), String(failure.message), {
    status: finite(failure.status),
    retryAfterMs: finite(failure.retryAfterMs),
    requestId: typeof failure.requestId === 'string' ? failure.requestId : undefined,
    providerCode: typeof failure.providerCode === 'string' ? failure.providerCode : undefined,
  })
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}
