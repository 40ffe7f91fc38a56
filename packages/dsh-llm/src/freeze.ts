/** A value whose every nested property is read-only. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T

/**
 * Freezes `value` and everything reachable from it, in place, and returns it. Already-frozen
 * subtrees are skipped, so freezing a tree that shares frozen parts costs only the new parts.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  Object.freeze(value)
  for (const key of Object.keys(value)) {
    deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/**
 * Returns a detached, deep-frozen copy of a JSON-shaped value (plain objects, arrays, strings,
 * finite numbers, booleans, null). Properties whose value is `undefined` are dropped.
 */
export function frozenCopy<T>(value: T): T {
  return deepFreeze(copyJson(value))
}

function copyJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map(copyJson) as T
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key]
    if (member !== undefined) out[key] = copyJson(member)
  }
  return out as T
}
