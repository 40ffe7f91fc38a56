/** Which response header carries the provider's request id. */

/**
 * Response headers that carry a request id, in the order they are tried: the common `x-request-id`
 * (OpenAI, Groq, Together, Fireworks, vLLM behind most gateways), `request-id`, Azure's
 * `apim-request-id` and `x-ms-request-id`, Mistral's gateway `x-kong-request-id`, DeepSeek's
 * `x-ds-trace-id`, AWS's `x-amzn-requestid`, a generic `x-trace-id`, and Cloudflare's `cf-ray`.
 */
export const REQUEST_ID_HEADERS: readonly string[] = Object.freeze([
  'x-request-id',
  'request-id',
  'apim-request-id',
  'x-ms-request-id',
  'x-kong-request-id',
  'x-ds-trace-id',
  'x-amzn-requestid',
  'x-trace-id',
  'cf-ray',
])

/** The first non-empty request id header of `headers`, or `undefined`. */
export function headerRequestId(headers: Headers): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers.get(name)?.trim()
    if (value !== undefined && value !== '') return value
  }
  return undefined
}
