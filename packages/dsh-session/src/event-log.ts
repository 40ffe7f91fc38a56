/**
 * The array a session keeps its events in, as callers see it through `session.events`: reading is a
 * plain array's, but every in-place mutator throws, so a caller cannot reorder, drop or add events
 * behind the log's back. Arrays derived from it (`slice`, `map`, `filter`) are plain arrays.
 *
 * Once a step's `assistant/message` is added, its chunk events are folded into a `ChunkRun` (see
 * `chunk-runs.ts`); `view()` decodes them on every read, so callers still see every event.
 */
import { ChunkRun, isPlainChunk, type LogEntry, MIN_RUN } from './chunk-runs.ts'
import { SessionError, SessionErrorCode } from './errors.ts'
import type { SessionEvent, SessionEventOf } from './types.ts'

type ChunkEvent = SessionEventOf<'assistant/chunk'>

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
   * An `assistant/message` folds the chunk events of its step right before it (see
   * `evictChunksBefore`) into one `ChunkRun`: from then on the raw slots hold runs, which only
   * `view()` (and `eventAt`) decode. `canonical`: the event is an `assistant/chunk` whose payload
   * `snapshotChunkData` built, so its keys need no checking. The log tracks the run as events
   * arrive, so the fold neither scans back nor re-checks keys.
   */
  add(event: SessionEvent, canonical = false): void {
    // An index store: about half the cost of `Array.prototype.push.call` on this subclass.
    const index = this.length
    this[index] = event
    if (event.type === 'assistant/chunk') this.#run.extend(event, index, canonical)
    else if (event.type === 'assistant/message') this.#run.fold(this as LogEntry[], event, index)
  }

  /** A private field, not a property: the log compares and iterates as a plain array of events. */
  readonly #run = new TrailingRun()

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

/** The trailing run of plain chunk events of one step in a log: slots `[start, end)`, empty when equal. */
class TrailingRun {
  private start = 0
  private end = 0
  private turn = 0
  private step = 0

  /** Takes the chunk event just added at `index` into the run, or starts a new one (or none). */
  extend(event: ChunkEvent, index: number, canonical: boolean): void {
    const { turn, step } = event.data
    if (!canonical && !isPlainChunk(event, turn, step)) {
      this.start = this.end = index + 1
    } else if (this.end === index && this.end > this.start && this.turn === turn && this.step === step) {
      this.end++
    } else {
      this.start = index
      this.end = index + 1
      this.turn = turn
      this.step = step
    }
  }

  /**
   * After `message` was added at `index`: folds the run into one `ChunkRun` if it ends right before
   * the message, belongs to its step and is long enough — what `evictChunksBefore` would fold.
   */
  fold(entries: LogEntry[], message: SessionEventOf<'assistant/message'>, index: number): void {
    const { start, end } = this
    this.start = this.end = index + 1
    if (end !== index || end - start < MIN_RUN) return
    if (message.data.turn !== this.turn || message.data.step !== this.step) return
    const run = ChunkRun.of(entries, start, end, message)
    for (let i = start; i < end; i++) entries[i] = run
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
