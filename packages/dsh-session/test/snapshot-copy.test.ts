/** snapshotJson's copy: equal members, no shared objects, no symbol keys, every member read once. */
import { describe, expect, it } from 'vitest'
import { snapshotJson } from '../src/snapshot.ts'

describe('snapshotJson copy', () => {
  it('copies objects of any size member by member, in order, frozen and detached', () => {
    const source = {
      turn: 1,
      step: 2,
      callId: 'c',
      name: 'read',
      arguments: '{}',
      nested: { a: [1, { b: 2 }] },
    }
    const copy = snapshotJson(source, 'tool/call')
    expect(copy).toEqual(source)
    expect(Object.keys(copy)).toEqual(['turn', 'step', 'callId', 'name', 'arguments', 'nested'])
    expect(copy).not.toBe(source)
    expect(copy.nested).not.toBe(source.nested)
    expect(copy.nested.a[1]).not.toBe(source.nested.a[1])
    expect(Object.isFrozen(copy) && Object.isFrozen(copy.nested) && Object.isFrozen(copy.nested.a[1])).toBe(
      true,
    )
  })

  it('leaves symbol-keyed members out, at the top and nested', () => {
    const mark = Symbol('mark')
    const source = { a: 1, [mark]: { secret: true }, inner: { b: 2, [mark]: 'x' } }
    const copy = snapshotJson(source, 'custom/event')
    expect(copy).toEqual({ a: 1, inner: { b: 2 } })
    expect(Object.getOwnPropertySymbols(copy)).toEqual([])
    expect(Object.getOwnPropertySymbols(copy.inner)).toEqual([])
  })

  it('reads an accessor member once and keeps its value', () => {
    let reads = 0
    const source = {
      get value() {
        reads++
        return { n: reads }
      },
    }
    const copy = snapshotJson(source, 'custom/event')
    expect(copy).toEqual({ value: { n: 1 } })
    expect(Object.getOwnPropertyDescriptor(copy, 'value')?.get).toBeUndefined()
    expect(reads).toBe(1)
  })

  it('refuses an own __proto__ member by the careful walk (a copy, not a prototype change)', () => {
    const source = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>
    const copy = snapshotJson(source, 'custom/event') as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['__proto__', 'y'])
  })
})
