/**
 * `snapshotJson` copies the common case without path bookkeeping and defers to a careful walk for
 * anything else; these pin that both paths give the same result: equal, detached, deep-frozen
 * copies, and the same refusals with full paths however deep the value is.
 */
import { SessionError, snapshotJson } from 'dsh-session'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'

/** Every object reachable from `value`, for checking that a copy shares none with its input. */
function objectsOf(value: unknown, into = new Set<object>()): Set<object> {
  if (typeof value === 'object' && value !== null) {
    into.add(value)
    for (const member of Object.values(value)) objectsOf(member, into)
  }
  return into
}

function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(deeplyFrozen)
}

function nest(depth: number, leaf: unknown): unknown {
  let value = leaf
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { inner: value } : [value]
  return value
}

function refusalMessage(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    if (error instanceof SessionError) return `${error.code}: ${error.message}`
    throw error
  }
  throw new Error('expected a refusal')
}

describe('snapshotJson', () => {
  test('any JSON value comes back equal, detached and deep-frozen', () => {
    // Through JSON text, so every -0 (which append refuses) becomes 0.
    const json = fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown)
    fc.assert(
      fc.property(json, (value) => {
        const copy = snapshotJson(value, 'test/event')
        expect(copy).toEqual(value)
        expect(deeplyFrozen(copy)).toBe(true)
        const inputs = objectsOf(value)
        for (const object of objectsOf(copy)) expect(inputs.has(object)).toBe(false)
      }),
      { numRuns: 300 },
    )
  })

  test('a valid value deeper than the quick path reaches is still copied whole', () => {
    const deep = nest(200, { text: 'leaf' })
    const copy = snapshotJson(deep, 'test/event')
    expect(copy).toEqual(deep)
    expect(deeplyFrozen(copy)).toBe(true)
  })

  test('a refusal deep in a value names its full path, as near the root', () => {
    expect(refusalMessage(() => snapshotJson(nest(3, { n: Number.NaN }), 'test/event'))).toBe(
      'NOT_JSON: test/event: data.inner[0].inner.n is NaN; event data must be plain JSON',
    )
    const path = `data${'[0].inner'.repeat(50)}.n`
    expect(refusalMessage(() => snapshotJson(nest(100, { n: 1n }), 'test/event'))).toBe(
      `NOT_JSON: test/event: ${path} is a BigInt; event data must be plain JSON`,
    )
  })

  test('an own __proto__ key is kept as data, not as a prototype', () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>
    const copy = snapshotJson(value, 'test/event') as Record<string, unknown>
    expect(Object.keys(copy)).toEqual(['__proto__', 'a'])
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true })
  })
})
