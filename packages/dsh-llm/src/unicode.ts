/**
 * Well-formed UTF-16 at the log boundary: lone surrogates cannot be encoded as UTF-8, so text that
 * enters the log or a request has each one replaced by U+FFFD.
 */

/** The replacement character that stands in for a lone surrogate. */
export const REPLACEMENT_CHARACTER = '\uFFFD'

interface WellFormedString {
  isWellFormed(): boolean
  toWellFormed(): string
}

/** True when `text` has no lone surrogate (`String.prototype.isWellFormed`, ES2024). */
export function isWellFormed(text: string): boolean {
  return (text as unknown as WellFormedString).isWellFormed()
}

/** `text` with every lone surrogate replaced by U+FFFD; the same string when it has none. */
export function wellFormed(text: string): string {
  const candidate = text as unknown as WellFormedString
  return candidate.isWellFormed() ? text : candidate.toWellFormed()
}

/** True when `code` (a UTF-16 code unit) is a high (leading) surrogate. */
export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/**
 * `value` (a JSON-shaped tree: plain objects, arrays, primitives) with every string — keys
 * included — made well-formed. Returns `value` itself when nothing needed a change, so the common
 * case allocates nothing; otherwise a copy of the changed paths (unchanged subtrees are shared).
 * Frozen inputs give plain (unfrozen) copies of the changed parts.
 */
export function wellFormedJson<T>(value: T): T {
  return repair(value) as T
}

function repair(value: unknown): unknown {
  if (typeof value === 'string') return wellFormed(value)
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let out: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const member: unknown = value[i]
      const fixed = repair(member)
      if (fixed !== member) {
        out ??= value.slice()
        out[i] = fixed
      }
    }
    return out ?? value
  }
  let out: Record<string, unknown> | undefined
  const source = value as Record<string, unknown>
  for (const key of Object.keys(source)) {
    const member = source[key]
    const fixed = repair(member)
    const fixedKey = wellFormed(key)
    if (fixed !== member || fixedKey !== key) {
      out ??= { ...source }
      if (fixedKey !== key) delete out[key]
      out[fixedKey] = fixed
    }
  }
  return out ?? value
}
