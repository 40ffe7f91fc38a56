/**
 * `firstDifference`: JSON values compared field by field (key order ignored, an `undefined` member
 * counts as absent). Equal values are confirmed by an allocation-free pass; a difference is then
 * located, with its path, by the walk that names it.
 */
import { firstDifference } from 'dsh-invariants'
import { describe, expect, it } from 'vitest'

describe('firstDifference', () => {
  it('finds no difference between equal values in another key order, with undefined members absent', () => {
    const expected = {
      type: 'tool-call',
      id: 'c1',
      arguments: { path: 'a', deep: [1, { x: null }] },
      extra: undefined,
    }
    const found = { arguments: { deep: [1, { x: null }], path: 'a' }, id: 'c1', type: 'tool-call' }
    expect(firstDifference(expected, found, 'content')).toBeUndefined()
    expect(firstDifference(found, expected, 'content')).toBeUndefined()
    expect(firstDifference([expected], [found], 'content')).toBeUndefined()
  })

  it('names the first differing path and both values there', () => {
    expect(firstDifference({ a: [1, { b: 'x' }] }, { a: [1, { b: 'y' }] }, 'content')).toEqual({
      path: 'content.a[1].b',
      expected: 'x',
      found: 'y',
    })
  })

  it('reports a member only one side has, in either direction', () => {
    expect(firstDifference({ a: 1 }, { a: 1, b: 2 }, 'v')?.path).toBe('v.b')
    expect(firstDifference({ a: 1, b: 2 }, { a: 1 }, 'v')?.path).toBe('v.b')
    expect(firstDifference({ a: 1, b: undefined }, { a: 1, b: null }, 'v')).toEqual({
      path: 'v.b',
      expected: expect.any(Symbol),
      found: null,
    })
  })

  it('tells arrays of other lengths, arrays from objects, and NaN and -0 as Object.is does', () => {
    expect(firstDifference([1], [1, undefined], 'v')?.path).toBe('v[1]')
    expect(firstDifference([], {}, 'v')).toEqual({ path: 'v', expected: [], found: {} })
    expect(firstDifference({ n: Number.NaN }, { n: Number.NaN }, 'v')).toBeUndefined()
    expect(firstDifference({ n: 0 }, { n: -0 }, 'v')?.path).toBe('v.n')
  })

  it('compares a key one side lists and the other holds unlisted', () => {
    const hidden = Object.defineProperty({}, 'k', { value: 1, enumerable: false })
    expect(firstDifference(hidden, { k: 1 }, 'v')).toBeUndefined()
    expect(firstDifference(hidden, { k: 2 }, 'v')).toEqual({ path: 'v.k', expected: 1, found: 2 })
    expect(firstDifference({ k: 2 }, hidden, 'v')).toEqual({ path: 'v.k', expected: 2, found: 1 })
  })
})
