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
  // `for...in` with an own-key test visits what `Object.keys` lists, without allocating the list.
  const record = value as Record<string, unknown>
  for (const key in record) if (Object.hasOwn(record, key)) deepFreeze(record[key])
  return value
}

/**
 * Returns a detached, deep-frozen copy of a JSON-shaped value (plain objects, arrays, strings,
 * finite numbers, booleans, null). Properties whose value is `undefined` are dropped.
 */
export function frozenCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value
  // One pass: each copy is frozen as it is built (it is fresh, so nothing in it is frozen yet).
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T
  const source = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue
    const member = source[key]
    if (member !== undefined) out[key] = frozenCopy(member)
  }
  return Object.freeze(out) as T
}

/**
 * Values known to be what `frozenCopy` would return for them: detached from any caller and deep-frozen
 * (the assembler's block lists). Copying one again would build an equal tree, so `detachedCopy` hands
 * it out as it is. Package-internal.
 */
const detached = new WeakSet<object>()

/** Records `value` (a fresh, deep-frozen, plain JSON-shaped tree nobody else holds mutably) for `detachedCopy`. */
export function markDetached<T extends object>(value: T): T {
  detached.add(value)
  return value
}

/** `frozenCopy(value)`, or `value` itself when it was marked with `markDetached`. */
export function detachedCopy<T>(value: T): T {
  return value !== null && typeof value === 'object' && detached.has(value) ? value : frozenCopy(value)
}
