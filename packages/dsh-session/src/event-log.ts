/**
 * The array a session keeps its events in, as callers see it through `session.events`: reading is a
 * plain array's, but every in-place mutator throws, so a caller cannot reorder, drop or add events
 * behind the log's back. Arrays derived from it (`slice`, `map`, `filter`) are plain arrays.
 *
 * Once a step's `assistant/message` is added, its chunk events are folded into a `ChunkRun` (see
 * `chunk-runs.ts`); `view()` decodes them on every read, so callers still see every event.
 */
import { ChunkRun, evictChunksBefore, type LogEntry } from './chunk-runs.ts'
import { SessionError, SessionErrorCode } from './errors.ts'
import type { SessionEvent } from './types.ts'

const push = Array.prototype.push

function refuse(method: string): never {
  throw new SessionError(
    SessionErrorCode.READ_ONLY,
    `session events are read-only: ${method}() cannot change the log; copy it first (events.slice())`,
  )
}

/** A session's committed events. Only the owning session appends, through `add`. */
export class EventLog extends Array<SessionEvent> {
  static override get [Symbol.species](): ArrayConstructor {
    return Array
  }

  /**
   * Appends a committed event (the owning session's path; callers cannot reach it through the type).
   * An `assistant/message` folds the chunk events of its step before it into one `ChunkRun`: from
   * then on the raw slots hold runs, which only `view()` (and `eventAt`) decode.
   */
  add(event: SessionEvent): void {
    const index = push.call(this, event) - 1
    if (event.type === 'assistant/message') evictChunksBefore(this as LogEntry[], index)
  }

  /**
   * The read-only array callers see: this log, with every slot a `ChunkRun` holds decoded into a
   * frozen event equal to the one committed (a new object on each read: compare events by `seq`, not
   * by identity). Mutators still throw `READ_ONLY`.
   */
  view(): readonly SessionEvent[] {
    return new Proxy(this, DECODING) as readonly SessionEvent[]
  }

  override push(): number {
    return refuse('push')
  }
  override pop(): SessionEvent | undefined {
    return refuse('pop')
  }
  override shift(): SessionEvent | undefined {
    return refuse('shift')
  }
  override unshift(): number {
    return refuse('unshift')
  }
  override splice(): SessionEvent[] {
    return refuse('splice')
  }
  override sort(): this {
    return refuse('sort')
  }
  override reverse(): SessionEvent[] {
    return refuse('reverse')
  }
  override fill(): this {
    return refuse('fill')
  }
  override copyWithin(): this {
    return refuse('copyWithin')
  }
}

/**
 * Proxy traps decoding `ChunkRun` slots (the slot's index is the event's seq), and refusing every
 * write that would reach the log without a method: index or `length` assignment, property
 * definition or deletion, a new prototype, freezing. A refused trap returns false, so the caller gets
 * what a frozen array gives: a TypeError in strict code (and from `Array.prototype` methods).
 */
const refused = () => false
const DECODING: ProxyHandler<EventLog> = {
  set: refused,
  defineProperty: refused,
  deleteProperty: refused,
  setPrototypeOf: refused,
  preventExtensions: refused,
  get(target, key) {
    const value: unknown = (target as unknown as Record<PropertyKey, unknown>)[key]
    return value instanceof ChunkRun ? value.at(Number(key)) : value
  },
  getOwnPropertyDescriptor(target, key) {
    const descriptor = Reflect.getOwnPropertyDescriptor(target, key)
    if (descriptor !== undefined && descriptor.value instanceof ChunkRun) {
      descriptor.value = descriptor.value.at(Number(key))
    }
    return descriptor
  },
}
