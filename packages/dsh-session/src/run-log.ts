/**
 * The array a log keeps its entries in (a session's log, the memory storage's): one slot per event
 * and one per chunk run, in seq order, so a step's chunks take one slot, not one each. A slot's first
 * seq is its event's `seq` or its run's `first`; it holds the seqs up to the next slot's first (a run
 * shared with another log may have grown past that). Lookups by seq start from the slot found last,
 * so a scan in seq order finds each in constant time.
 */
import type { StreamChunk } from 'dsh-llm'
import { ChunkRun, isPlainChunk, type LogEntry } from './chunk-runs.ts'
import type { SessionEvent, SessionEventType } from './types.ts'

/**
 * A log of committed events with chunk entries kept in runs. Chunks of one step that follow each
 * other share the open run; any other entry seals it.
 */
export class RunLog {
  /** One slot per event or run, in seq order. */
  readonly entries: LogEntry[] = []
  private count = 0
  private current: ChunkRun | undefined
  /** The slot the last lookup found. */
  private hint = 0

  /** How many seqs the log holds (the next seq). */
  get length(): number {
    return this.count
  }

  /** Adds a committed event (the next seq): a plain chunk event goes into a run, anything else as it is. */
  add(event: SessionEvent): void {
    if (event.type === 'assistant/chunk' && isPlainChunk(event)) {
      const { turn, step, chunk } = event.data
      this.addChunk(event.time, turn, step, chunk)
      return
    }
    this.current?.seal()
    this.current = undefined
    const entries = this.entries
    entries[entries.length] = event
    this.count++
  }

  /**
   * Adds one chunk entry (the next seq) and returns the run now holding it; `canonical` as
   * `ChunkRun.push` takes it.
   */
  addChunk(time: number, turn: number, step: number, chunk: StreamChunk, canonical = false): ChunkRun {
    const seq = this.count
    let run = this.current
    if (run === undefined || run.turn !== turn || run.step !== step || run.first + run.length !== seq) {
      run?.seal()
      run = new ChunkRun(seq, turn, step)
      this.current = run
      const entries = this.entries
      entries[entries.length] = run
    }
    run.push(time, chunk, canonical)
    this.count++
    return run
  }

  /**
   * Adds seq `seq`, the next one, as an entry of `run` (another log's, which the other log seals): the
   * memory storage shares the session's runs instead of copying their chunks.
   */
  addShared(run: ChunkRun, seq: number): void {
    if (this.current !== undefined) {
      this.current.seal()
      this.current = undefined
    }
    const entries = this.entries
    if (entries[entries.length - 1] !== run) entries[entries.length] = run
    this.count = seq + 1
  }

  /** A new log of this one's first `count` seqs (events and runs shared, not copied). */
  prefix(count: number): RunLog {
    const out = new RunLog()
    const entries = this.entries
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as LogEntry
      if (!(entry instanceof ChunkRun)) {
        if (entry.seq >= count) break
        out.add(entry)
        continue
      }
      const next = entries[i + 1]
      const end = Math.min(count, next === undefined ? this.count : firstSeq(next))
      for (let seq = entry.first; seq < end; seq++) out.addShared(entry, seq)
      if (end === count) break
    }
    return out
  }

  /** The event of `seq`, a chunk entry built (equal to the committed one); undefined outside the log. */
  at(seq: number): SessionEvent | undefined {
    if (!(seq >= 0 && seq < this.count) || !Number.isInteger(seq)) return undefined
    const entry = this.entries[this.find(seq)] as LogEntry
    return entry instanceof ChunkRun ? entry.at(seq) : entry
  }

  /** The type of the event of `seq`, a chunk entry's without building it; undefined outside the log. */
  typeAt(seq: number): SessionEventType | undefined {
    if (!(seq >= 0 && seq < this.count) || !Number.isInteger(seq)) return undefined
    const entry = this.entries[this.find(seq)] as LogEntry
    return entry instanceof ChunkRun ? 'assistant/chunk' : entry.type
  }

  /**
   * The first seq at or after `seq` (a non-negative integer) whose event is not an `assistant/chunk`,
   * or the log's length when only chunk entries follow: a run of chunk entries is passed in one step.
   */
  nonChunkSeq(seq: number): number {
    const count = this.count
    const entries = this.entries
    let at = seq
    while (at < count) {
      const slot = this.find(at)
      const entry = entries[slot] as LogEntry
      if (entry instanceof ChunkRun) {
        const next = entries[slot + 1]
        at = next === undefined ? count : firstSeq(next)
      } else if (entry.type === 'assistant/chunk') {
        at++
      } else {
        return at
      }
    }
    return count
  }

  /** The slot holding `seq` (a seq of the log). */
  private find(seq: number): number {
    const entries = this.entries
    const last = entries.length - 1
    let hint = this.hint
    if (hint > last) hint = last
    // The slot found last, or the one after it (a scan in seq order).
    if (firstSeq(entries[hint] as LogEntry) <= seq) {
      if (hint === last || firstSeq(entries[hint + 1] as LogEntry) > seq) return hint
      hint++
      if (hint === last || firstSeq(entries[hint + 1] as LogEntry) > seq) {
        this.hint = hint
        return hint
      }
    }
    // The last slot whose first seq is at most `seq`.
    let low = 0
    let high = last
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (firstSeq(entries[middle] as LogEntry) <= seq) low = middle
      else high = middle - 1
    }
    this.hint = low
    return low
  }
}

/** The first seq a slot holds. */
function firstSeq(entry: LogEntry): number {
  return entry instanceof ChunkRun ? entry.first : entry.seq
}
