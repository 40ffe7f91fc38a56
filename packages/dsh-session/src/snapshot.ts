/**
 * Snapshots event data as plain JSON in one pass: the copy is built and frozen while the input is
 * checked, so an accepted value costs one walk and the caller keeps no reference into the log.
 */
import { SessionError } from './errors.ts'
import { formatPath } from './path.ts'
import { isValidatedUserMessage } from './validated-messages.ts'

/**
 * Returns a detached, deep-frozen copy of `value` that JSON carries losslessly. Throws `SessionError`
 * `NOT_JSON` naming `eventType` and the offending path under `root` (`data.message.content[2]`) for:
 * BigInt, functions, symbols, `undefined` (as a member, an array element, a hole or the value
 * itself), NaN, ±Infinity, -0, cycles, and objects whose prototype is neither `Object.prototype` nor
 * `null` (class instances, Dates, Maps, ...). Shared acyclic references are copied per occurrence.
 */
export function snapshotJson<T>(value: T, eventType: string, root = 'data'): T {
  const copy = quickCopy(value, 0)
  if (copy !== REFUSED) return copy as T
  // Refused, too deep, or an odd key: the careful walk decides, tracking the path for the error.
  const walker = new SnapshotWalk(eventType, root)
  return walker.copy(value) as T
}

/**
 * The copy `snapshotJson` makes of `value`, when it makes it without the careful walk; `undefined`
 * when `snapshotJson` would throw (or `value` is deeper than the quick copy goes). Never throws.
 */
export function tryQuickSnapshot(value: unknown): unknown {
  const copy = quickCopy(value, 0)
  return copy === REFUSED ? undefined : copy
}

const REFUSED: unique symbol = Symbol('refused')

/** Deeper than this, `quickCopy` defers to the careful walk (which also detects cycles). */
const QUICK_DEPTH = 48

/**
 * The common case of `SnapshotWalk.copy` without path or ancestor bookkeeping: the same copy for
 * every value the walk accepts within `QUICK_DEPTH`, else `REFUSED` (the walk then runs and either
 * throws its error or, for a deep but valid value, copies it).
 */
function quickCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      return Number.isFinite(value) && !(value === 0 && 1 / value < 0) ? value : REFUSED
    case 'object': {
      if (value === null) return null
      if (depth >= QUICK_DEPTH) return REFUSED
      if (Array.isArray(value)) {
        const out = new Array<unknown>(value.length)
        for (let i = 0; i < value.length; i++) {
          const member = quickCopy(value[i], depth + 1)
          if (member === REFUSED) return REFUSED
          out[i] = member
        }
        return Object.freeze(out)
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return REFUSED
      // A checked user message is already a detached, deep-frozen plain-JSON copy: share it.
      if (isValidatedUserMessage(value)) return value
      // A spread copies the own enumerable members into an object sized for exactly that many (a `{}`
      // filled key by key has room for four, and puts a fifth in a separate array), in one step; the
      // members are then checked and their objects copied in place. Symbol keys, which the copy
      // leaves out, send the value to the careful walk (which leaves them out too).
      const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
      if (Object.getOwnPropertySymbols(out).length > 0) return REFUSED
      for (const key in out) {
        if (!Object.hasOwn(out, key) || key === '__proto__') return REFUSED
        const member = out[key]
        const copy = quickCopy(member, depth + 1)
        if (copy === REFUSED) return REFUSED
        if (copy !== member) out[key] = copy
      }
      return Object.freeze(out)
    }
    default:
      return REFUSED
  }
}

class SnapshotWalk {
  private readonly path: PropertyKey[] = []
  private readonly ancestors: object[] = []

  constructor(
    private readonly eventType: string,
    private readonly root: string,
  ) {}

  copy(value: unknown): unknown {
    switch (typeof value) {
      case 'string':
      case 'boolean':
        return value
      case 'number':
        if (!Number.isFinite(value)) this.fail(`is ${String(value)}`)
        if (value === 0 && 1 / value < 0) this.fail('is -0')
        return value
      case 'object':
        if (value === null) return null
        return Array.isArray(value) ? this.copyArray(value) : this.copyObject(value)
      case 'undefined':
        return this.fail('is undefined')
      case 'bigint':
        return this.fail('is a BigInt')
      case 'function':
        return this.fail('is a function')
      case 'symbol':
        return this.fail('is a symbol')
    }
    return this.fail(`has unsupported type ${typeof value}`)
  }

  private copyArray(value: readonly unknown[]): unknown[] {
    this.enter(value)
    const out = new Array<unknown>(value.length)
    for (let i = 0; i < value.length; i++) {
      this.path.push(i)
      out[i] = this.copy(value[i])
      this.path.pop()
    }
    this.leave()
    return Object.freeze(out) as unknown[]
  }

  private copyObject(value: object): Record<string, unknown> {
    const proto: unknown = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) {
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name
      this.fail(`is an instance of ${typeof name === 'string' && name !== '' ? name : 'a class'}`)
    }
    this.enter(value)
    const out: Record<string, unknown> = {}
    const source = value as Record<string, unknown>
    for (const key of Object.keys(source)) {
      this.path.push(key)
      const member = this.copy(source[key])
      if (key === '__proto__')
        Object.defineProperty(out, key, { value: member, enumerable: true, writable: true })
      else out[key] = member
      this.path.pop()
    }
    this.leave()
    return Object.freeze(out)
  }

  private enter(value: object): void {
    if (this.ancestors.includes(value)) this.fail('is a cycle (it contains itself)')
    this.ancestors.push(value)
  }

  private leave(): void {
    this.ancestors.pop()
  }

  private fail(problem: string): never {
    const path = formatPath(this.root, this.path)
    throw new SessionError(
      'NOT_JSON',
      `${this.eventType}: ${path} ${problem}; event data must be plain JSON`,
      {
        eventType: this.eventType,
        path,
      },
    )
  }
}
