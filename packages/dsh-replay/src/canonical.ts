/**
 * The canonical form of a request: what a recorded response is keyed by. Everything that does not
 * change what the model is asked is left out, so a replay matches across runs.
 */
import { createHash } from 'node:crypto'
import type { LlmRequest } from 'dsh-llm'

/** A JSON value as stored in a fixture. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json }

/** A request in canonical form: plain JSON, keys sorted, the normalized fields removed. */
export type CanonicalRequest = { readonly [key: string]: Json }

function sortKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== 'object') return value
  const out: { [key: string]: Json } = {}
  for (const key of Object.keys(value).sort()) {
    const member = (value as { readonly [key: string]: Json })[key]
    if (member !== undefined) out[key] = sortKeys(member)
  }
  return out
}

/**
 * The canonical form of `request`. Normalized away, and only these:
 * - `signal` (a live handle) and `sessionId` (which session asked does not change the answer);
 * - each message's `id` (minted at random by the loop and by `createUserMessage`).
 * Key order and `undefined` members do not matter. Everything else — provider, model, every sampling
 * parameter, system prompt, tools, message roles, sources and content, tool call ids — is kept.
 */
export function canonicalRequest(request: LlmRequest): CanonicalRequest {
  const { signal: _signal, sessionId: _sessionId, messages, ...rest } = request
  const plain = JSON.parse(
    JSON.stringify({ ...rest, messages: messages.map(({ id: _id, ...message }) => message) }),
  ) as Json
  return sortKeys(plain) as CanonicalRequest
}

/** Compact JSON of a canonical value (keys already sorted, so equal values give equal text). */
export function canonicalJson(value: Json): string {
  return JSON.stringify(sortKeys(value))
}

/** The fixture key of a canonical request: `sha256:` and the hex digest of its canonical JSON. */
export function requestKey(canonical: CanonicalRequest): string {
  return `sha256:${createHash('sha256').update(canonicalJson(canonical)).digest('hex')}`
}
