/**
 * The request header: the non-history part of every model request, recorded as `request/header`
 * snapshots. Folding takes the latest snapshot; comparison works on canonical forms.
 */
import { deepFreeze } from 'dsh-llm'
import type { HeaderState, RequestHeader, SessionEvent } from './types.ts'

/**
 * The canonical form of `header`: a frozen copy with empty `system`, `tools` and `messagePrefix`
 * removed (empty means absent). Config scalars are kept as given. Does not mutate its input.
 */
export function canonicalHeader(header: RequestHeader): RequestHeader {
  if (Object.isFrozen(header) && isCanonical(header)) return header
  const out: { -readonly [K in keyof RequestHeader]: RequestHeader[K] } = { config: header.config }
  if (header.system !== undefined && header.system !== '') out.system = header.system
  if (header.tools !== undefined && header.tools.length > 0) out.tools = header.tools
  if (header.messagePrefix !== undefined && header.messagePrefix.length > 0)
    out.messagePrefix = header.messagePrefix
  return deepFreeze(out)
}

function isCanonical(header: RequestHeader): boolean {
  return header.system !== '' && header.tools?.length !== 0 && header.messagePrefix?.length !== 0
}

/** True when the canonical forms of `a` and `b` are structurally equal (key order ignored). */
export function headersEqual(a: RequestHeader, b: RequestHeader): boolean {
  return jsonEqual(canonicalHeader(a), canonicalHeader(b))
}

/** Structural equality of JSON values; object key order is ignored, absent equals `undefined`. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  const keys = new Set([...Object.keys(left), ...Object.keys(right)])
  for (const key of keys) if (!jsonEqual(left[key], right[key])) return false
  return true
}

/** The header state of one `request/header` event (canonicalised), or `undefined` for other events. */
export function headerStateOf(event: SessionEvent): HeaderState | undefined {
  if (event.type !== 'request/header') return undefined
  return Object.freeze({
    header: canonicalHeader(event.data.header),
    reason: event.data.reason,
    seq: event.seq,
  })
}

/** Folds the latest `request/header` snapshot of `events`, or `undefined` if there is none. */
export function foldRequestHeader(events: readonly SessionEvent[]): HeaderState | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]
    if (event?.type === 'request/header') return headerStateOf(event)
  }
  return undefined
}
