/**
 * A session's events: chunk entries live in their step's run (see `chunk-runs.ts`, `run-log.ts`);
 * `at` and `snapshot` build their events, so callers still see every event. Callers never get this array itself: `session.events` is a frozen snapshot (`snapshot()`), a plain
 * array that `structuredClone` copies.
 */
import type { StreamChunk } from 'dsh-llm'
import { ChunkRun, type LogEntry } from './chunk-runs.ts'
import { SessionError, SessionErrorCode } from './errors.ts'
import { RunLog } from './run-log.ts'
import type { SessionEvent, SessionEventType } from './types.ts'

function refuse(method: string): never {
  throw new SessionError(
    SessionErrorCode.READ_ONLY,
    `session events are read-only: ${method}() cannot change the log; copy it first (events.slice())`,
  )
}

/** A session's committed events. Only the owning session appends, through `add` and `addChunk`. */
export class EventLog {
  private readonly runs: RunLog

  /** A log over `runs` (a backend's, shared), else a new one. */
  constructor(runs?: RunLog) {
    this.runs = runs ?? new RunLog()
  }
  /** The last snapshot handed out, while a caller holds it (a prefix the next one copies). */
  private last: WeakRef<FrozenEvents> | undefined

  /** The raw slots (one per event or run), runs unbuilt (for folds that skip chunk entries, like the surface). */
  get raw(): readonly LogEntry[] {
    return this.runs.entries
  }

  /** How many events the log holds. */
  get length(): number {
    return this.runs.length
  }

  /** Appends a committed event (a plain chunk event goes into its step's run). */
  add(event: SessionEvent): void {
    this.runs.add(event)
  }

  /** Appends a committed chunk entry (frozen, validated) and returns the run holding it. */
  addChunk(time: number, turn: number, step: number, chunk: StreamChunk, canonical = false): ChunkRun {
    return this.runs.addChunk(time, turn, step, chunk, canonical)
  }

  /** The event of `seq`, a chunk entry built (equal to the committed one); undefined past the end. */
  at(seq: number): SessionEvent | undefined {
    return this.runs.at(seq)
  }

  /** The type of the event of `seq`, a folded chunk's without rebuilding it; undefined past the end. */
  typeAt(seq: number): SessionEventType | undefined {
    return this.runs.typeAt(seq)
  }

  /** The first seq at or after `seq` that is not a chunk entry (the length when none is): see `RunLog`. */
  nonChunkSeq(seq: number): number {
    return this.runs.nonChunkSeq(seq)
  }

  /**
   * Every committed event as a frozen plain array (mutator methods throw `READ_ONLY`): the same
   * array while the log has not grown; after an append a new one, copying the previous snapshot if a
   * caller still holds it and rebuilding only the folded chunk events it lacks. Held weakly, so an
   * idle session keeps its chunks folded.
   */
  snapshot(): readonly SessionEvent[] {
    const length = this.runs.length
    const previous = this.last?.deref()
    if (previous !== undefined && previous.length === length) return previous
    const out = new FrozenEvents()
    let seq = 0
    if (previous !== undefined) for (; seq < previous.length; seq++) out[seq] = previous[seq] as SessionEvent
    const entries = this.runs.entries
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as LogEntry
      if (!(entry instanceof ChunkRun)) {
        if (entry.seq >= seq) out[seq++] = entry
        continue
      }
      const end = Math.min(entry.first + entry.length, length)
      for (let s = Math.max(seq, entry.first); s < end; s++) out[seq++] = entry.at(s)
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
