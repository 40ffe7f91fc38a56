/**
 * The array a session keeps its events in. Once a step's `assistant/message` is added, its chunk
 * events are folded into a `ChunkRun` (see `chunk-runs.ts`); `at` and `snapshot` decode them, so
 * callers still see every event. Callers never get this array itself: `session.events` is a frozen
 * snapshot (`snapshot()`), a plain array that `structuredClone` copies.
 */
import { ChunkRun, isPlainChunk, type LogEntry, MIN_RUN } from './chunk-runs.ts'
import { SessionError, SessionErrorCode } from './errors.ts'
import type { SessionEvent, SessionEventOf, SessionEventType } from './types.ts'

type ChunkEvent = SessionEventOf<'assistant/chunk'>

function refuse(method: string): never {
  throw new SessionError(
    SessionErrorCode.READ_ONLY,
    `session events are read-only: ${method}() cannot change the log; copy it first (events.slice())`,
  )
}

/** A session's committed events. Only the owning session appends, through `add`. */
export class EventLog {
  /** Slot i holds seq i: the event, or the run its chunk event was folded into. */
  private readonly entries: LogEntry[] = []
  /** The last snapshot handed out, while a caller holds it (a prefix the next one copies). */
  private last: WeakRef<FrozenEvents> | undefined

  /** The raw slots, runs undecoded (for folds that skip chunk events, like the surface). */
  get raw(): readonly LogEntry[] {
    return this.entries
  }

  /** How many events the log holds. */
  get length(): number {
    return this.entries.length
  }

  /**
   * Appends a committed event (the owning session's path). An `assistant/message` folds the chunk
   * events of its step right before it (see `evictChunksBefore`) into one `ChunkRun`.
   * `canonical`: the event is an `assistant/chunk` whose payload `snapshotChunkData` built, so its
   * keys need no checking. The log tracks the run as events arrive, so the fold neither scans back
   * nor re-checks keys.
   */
  add(event: SessionEvent, canonical = false): void {
    const entries = this.entries
    const index = entries.length
    entries[index] = event
    if (event.type === 'assistant/chunk') this.#run.extend(event, index, canonical)
    else if (event.type === 'assistant/message') this.#run.fold(entries, event, index)
  }

  readonly #run = new TrailingRun()

  /** The event of `seq`, a folded chunk rebuilt (equal to the committed one); undefined past the end. */
  at(seq: number): SessionEvent | undefined {
    const entry = this.entries[seq]
    return entry instanceof ChunkRun ? entry.at(seq) : entry
  }

  /** The type of the event of `seq`, a folded chunk's without rebuilding it; undefined past the end. */
  typeAt(seq: number): SessionEventType | undefined {
    const entry = this.entries[seq]
    return entry instanceof ChunkRun ? 'assistant/chunk' : entry?.type
  }

  /**
   * Every committed event as a frozen plain array (mutator methods throw `READ_ONLY`): the same
   * array while the log has not grown; after an append a new one, copying the previous snapshot if a
   * caller still holds it and rebuilding only the folded chunk events it lacks. Held weakly, so an
   * idle session keeps its chunks folded.
   */
  snapshot(): readonly SessionEvent[] {
    const entries = this.entries
    const previous = this.last?.deref()
    if (previous !== undefined && previous.length === entries.length) return previous
    const out = new FrozenEvents()
    let seq = 0
    if (previous !== undefined) for (; seq < previous.length; seq++) out[seq] = previous[seq] as SessionEvent
    for (; seq < entries.length; seq++) {
      const entry = entries[seq] as LogEntry
      out[seq] = entry instanceof ChunkRun ? entry.at(seq) : entry
    }
    Object.freeze(out)
    this.last = new WeakRef(out)
    return out
  }
}

/**
 * What `session.events` returns: an array, frozen once filled, whose in-place mutators throw
 * `READ_ONLY` naming the method (a frozen array alone would throw a bare TypeError). Derived arrays
 * (`slice`, `map`, `filter`) are plain arrays.
 */
class FrozenEvents extends Array<SessionEvent> {
  static override get [Symbol.species](): ArrayConstructor {
    return Array
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
