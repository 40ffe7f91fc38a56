/** Replay metadata: the AI SDK's provider metadata becomes a block's `providerData`, and back. */

import type { SharedV3ProviderMetadata, SharedV3ProviderOptions } from '@ai-sdk/provider'
import type { JsonObject, JsonValue, ProviderData } from 'dsh-llm'
import { isRecord } from 'dsh-llm'

/**
 * Plain JSON of `metadata`, keyed by provider: members whose value is not JSON (`undefined`, a
 * function) are left out, as `JSON.stringify` would, so the block survives the log byte for byte.
 * `undefined` when nothing is left.
 */
export function providerDataOf(metadata: SharedV3ProviderMetadata | undefined): ProviderData | undefined {
  if (metadata === undefined || metadata === null || typeof metadata !== 'object') return undefined
  const out: Record<string, JsonObject> = {}
  let any = false
  for (const [provider, value] of Object.entries(metadata)) {
    const json = jsonOf(value)
    if (!isRecord(json)) continue
    if (Object.keys(json).length === 0) continue
    out[provider] = json as JsonObject
    any = true
  }
  return any ? out : undefined
}

/** `a` with `b`'s members merged in per provider (later metadata of one block adds to the earlier). */
export function mergeProviderData(
  a: ProviderData | undefined,
  b: ProviderData | undefined,
): ProviderData | undefined {
  if (a === undefined) return b
  if (b === undefined) return a
  const out: Record<string, JsonObject> = { ...a }
  for (const [provider, value] of Object.entries(b)) out[provider] = { ...(out[provider] ?? {}), ...value }
  return out
}

/** A block's `providerData` as the provider options of a prompt part (verbatim; it is already JSON). */
export function providerOptionsOf(data: ProviderData | undefined): SharedV3ProviderOptions | undefined {
  return data === undefined ? undefined : (data as SharedV3ProviderOptions)
}

function jsonOf(value: unknown): JsonValue | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (Array.isArray(value)) return value.map((item) => jsonOf(item) ?? null)
  if (typeof value !== 'object') return undefined
  const out: Record<string, JsonValue> = {}
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const json = jsonOf(member)
    if (json !== undefined) out[key] = json
  }
  return out
}
