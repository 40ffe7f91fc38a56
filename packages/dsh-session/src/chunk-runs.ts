/**
 * Chunk runs: a step's consecutive `assistant/chunk` entries, kept as one object in whatever array
 * holds a log (a session's log, the memory storage), one slot per seq all pointing at the run. An
 * open run holds each chunk as the frozen object it was appended as, and its time as an unboxed
 * double; once the log moves past it, the run is sealed: its chunks and times become one JSON string
 * of rows against a process-wide table of chunk shapes, its closed blocks' texts held by reference
 * (see `chunk-encoding.ts`). A frozen `assistant/chunk`
 * event is built only when something reads one (`at`), equal to what the event would have been.
 */
import { deepFreeze, type StreamChunk } from 'dsh-llm'
import { decodeRun, decodeRunTimes, encodeRun } from './chunk-encoding.ts'
import type { SessionEvent, SessionEventOf } from './types.ts'

type ChunkEvent = SessionEventOf<'assistant/chunk'>

/** A chunk entry without its event: seq `seq` of `run`. */
export interface ChunkRef {
  readonly run: ChunkRun
  readonly seq: number
}

/** A slot of an array of events: the event itself, or the chunk run holding its seq. */
export type LogEntry = SessionEvent | ChunkRun

/** A contiguous run of one step's `assistant/chunk` entries, seqs `first` to `first + length - 1`. */
export class ChunkRun {
  /**
   * The chunks' `time`s, in order (a plain array of numbers: unboxed doubles), while open; once
   * sealed only if the encoding could not carry them (see `chunk-encoding.ts`).
   */
  private times: number[] | undefined = []
  /** While open: the frozen chunks, in order. */
  private open: StreamChunk[] | undefined = []
  /** Once sealed: the chunks (and usually the times) encoded, and the block texts it refers to. */
  private json = ''
  private texts: readonly string[] | undefined
  private size = 0
  /** Whether every chunk pushed so far was built by the session's chunk snapshot (see `push`). */
  private canonical = true

  constructor(
    readonly first: number,
    readonly turn: number,
    readonly step: number,
  ) {}

  /** How many entries the run holds. */
  get length(): number {
    return this.size
  }

  /** Whether more chunks may still be pushed. */
  get isOpen(): boolean {
    return this.open !== undefined
  }

  /**
   * Appends one entry (the run's next seq); `chunk` must be frozen plain JSON with a string `type`.
   * `canonical`: `chunk` is a copy `snapshotChunk` built (one of the common forms, keys in canonical
   * order), which the encoder writes without walking its keys.
   */
  push(time: number, chunk: StreamChunk, canonical = false): void {
    const times = this.times as number[]
    times[times.length] = time
    const open = this.open as StreamChunk[]
    open[open.length] = chunk
    this.size++
    if (!canonical) this.canonical = false
  }

  /** Encodes the chunks compactly; no `push` follows. */
  seal(): void {
    const open = this.open
    if (open === undefined) return
    const encoded = encodeRun(open, this.times as number[], this.canonical)
    this.json = encoded.json
    this.texts = encoded.texts
    this.times = encoded.timesEncoded ? undefined : (this.times as number[]).slice()
    this.open = undefined
    if (lastRun === this) lastRun = undefined
  }

  /** The time of `seq` (within the run). */
  timeAt(seq: number): number {
    return (this.times ?? this.decodedTimes())[seq - this.first] as number
  }

  /** The chunk of `seq` (within the run), frozen. */
  chunkAt(seq: number): StreamChunk {
    const index = seq - this.first
    const open = this.open
    return (open === undefined ? this.decoded().chunks : open)[index] as StreamChunk
  }

  /** The times of seqs `[from, from + count)` (within the run), as a new array. */
  timesOf(from: number, count: number): number[] {
    const start = from - this.first
    return (this.times ?? this.decodedTimes()).slice(start, start + count)
  }

  /** The chunks of seqs `[from, from + count)` (within the run), as a new array. */
  chunksOf(from: number, count: number): StreamChunk[] {
    const start = from - this.first
    const open = this.open
    return (open === undefined ? this.decoded().chunks : open).slice(start, start + count)
  }

  /** The event at `seq` (within the run), built and frozen: equal to, not the same as, any earlier one. */
  at(seq: number): SessionEvent {
    return materializeChunk(seq, this.timeAt(seq), this.turn, this.step, this.chunkAt(seq))
  }

  /** A sealed run's times, read without decoding its chunks (the last run's are kept). */
  private decodedTimes(): readonly number[] {
    if (lastRun === this) return last.times
    if (lastTimesRun !== this) {
      lastTimes = decodeRunTimes(this.json) ?? []
      lastTimesRun = this
    }
    return lastTimes
  }

  /** The sealed run decoded (the last one decoded is kept, so a sequential scan parses each run once). */
  private decoded(): Decoded {
    if (lastRun !== this) {
      const { chunks, times } = decodeRun(this.json, this.texts)
      last = { chunks: deepFreeze(chunks), times: times ?? (this.times as number[]) }
      lastRun = this
    }
    return last
  }
}

interface Decoded {
  readonly chunks: readonly StreamChunk[]
  readonly times: readonly number[]
}

/** One decoded sealed run, so a sequential scan parses each run once. */
let lastRun: ChunkRun | undefined
let last: Decoded = { chunks: [], times: [] }
/** The times of one sealed run, read alone (see `decodedTimes`). */
let lastTimesRun: ChunkRun | undefined
let lastTimes: readonly number[] = []

/** Counts every chunk event built from a run (a test hook: the append path builds none). */
export const chunkEventsBuilt = { count: 0 }

/** The frozen `assistant/chunk` event of these parts, keys in the envelope's canonical order. */
export function materializeChunk(
  seq: number,
  time: number,
  turn: number,
  step: number,
  chunk: StreamChunk,
): ChunkEvent {
  chunkEventsBuilt.count++
  return Object.freeze({
    type: 'assistant/chunk',
    seq,
    time,
    data: Object.freeze({ turn, step, chunk }),
  }) as ChunkEvent
}

/** A chunk event whose keys are exactly what a run rebuilds, in the same order. */
export function isPlainChunk(event: SessionEvent): event is ChunkEvent {
  if (event.type !== 'assistant/chunk') return false
  const chunk: object = event.data.chunk
  return (
    sameKeys(event, EVENT_KEYS) &&
    sameKeys(event.data, DATA_KEYS) &&
    typeof event.data.chunk.type === 'string' &&
    !Object.hasOwn(chunk, '__proto__')
  )
}

/** A chunk payload (`{turn, step, chunk}`) whose keys are exactly what a run rebuilds, in order. */
export function isPlainChunkData(data: {
  readonly turn: number
  readonly step: number
  readonly chunk: StreamChunk
}): boolean {
  const chunk: object = data.chunk
  return (
    sameKeys(data, DATA_KEYS) && typeof data.chunk.type === 'string' && !Object.hasOwn(chunk, '__proto__')
  )
}

const EVENT_KEYS = ['type', 'seq', 'time', 'data']
const DATA_KEYS = ['turn', 'step', 'chunk']

function sameKeys(value: object, keys: readonly string[]): boolean {
  let i = 0
  for (const key in value) {
    if (key !== keys[i]) return false
    i++
  }
  return i === keys.length
}
