/**
 * Chunk eviction: once a step's `assistant/message` commits, the `assistant/chunk` events right
 * before it are replaced, in whatever array holds them (a session's log, the memory storage), by one
 * compact `ChunkRun` — the times as unboxed doubles and the chunks as one JSON string of rows against
 * a table of chunk shapes (type and key order, written once per run) — and decoded
 * back on access into frozen events equal to the originals. One chunk event costs ~200 bytes of heap
 * as objects and ~45 as part of a run. The session and `MemoryStorage` share one run per step.
 */
import { deepFreeze } from 'dsh-llm'
import type { SessionEvent, SessionEventOf } from './types.ts'

type ChunkEvent = SessionEventOf<'assistant/chunk'>

/** A slot of an array of events: the event itself, or the compact run it was folded into. */
export type LogEntry = SessionEvent | ChunkRun

/** Runs shorter than this stay as objects (a run's own overhead would not pay off). */
const MIN_RUN = 2

/** A contiguous run of one step's `assistant/chunk` events, seqs `first` to `first + length - 1`. */
export class ChunkRun {
  /** The chunks' `time`s, in order (a plain array of numbers: unboxed doubles, counted in the heap). */
  private readonly times: number[]
  private readonly json: string

  private constructor(
    readonly first: number,
    readonly turn: number,
    readonly step: number,
    events: readonly ChunkEvent[],
  ) {
    this.times = events.map((event) => event.time)
    this.json = encodeChunks(events.map((event) => event.data.chunk))
  }

  /** How many events the run holds. */
  get length(): number {
    return this.times.length
  }

  /** The event at `seq` (within the run), rebuilt and frozen: equal to, not the same as, the original. */
  at(seq: number): SessionEvent {
    const index = seq - this.first
    const chunks = this.chunks()
    const event = Object.freeze({
      type: 'assistant/chunk',
      seq,
      time: this.times[index] as number,
      data: Object.freeze({ turn: this.turn, step: this.step, chunk: chunks[index] }),
    }) as ChunkEvent
    if (index === 0) shared.set(event, this)
    return event
  }

  private chunks(): readonly ChunkEvent['data']['chunk'][] {
    if (lastRun !== this) {
      lastChunks = deepFreeze(decodeChunks(this.json))
      lastRun = this
    }
    return lastChunks
  }

  /**
   * The run for `events` (one step's chunk events, seqs contiguous): the run another holder already
   * built for the same first event object if there is one, so that holders share it; else a new one.
   */
  static of(events: readonly ChunkEvent[]): ChunkRun {
    const head = events[0] as ChunkEvent
    const known = shared.get(head)
    if (known !== undefined && known.length === events.length) return known
    const run = new ChunkRun(head.seq, head.data.turn, head.data.step, events)
    shared.set(head, run)
    return run
  }
}

/** The run built for (or decoded into) each run's first event object, while that object lives. */
const shared = new WeakMap<object, ChunkRun>()
/** One decoded run, so a sequential scan parses each run once. */
let lastRun: ChunkRun | undefined
let lastChunks: readonly ChunkEvent['data']['chunk'][] = []

/** The event of seq `seq` in `entries` (whose slot i holds seq i), decoding a run; undefined past the end. */
export function eventAt(entries: readonly LogEntry[], seq: number): SessionEvent | undefined {
  const entry = entries[seq]
  return entry instanceof ChunkRun ? entry.at(seq) : entry
}

/**
 * After `entries[messageIndex]` (an `assistant/message`; slot i holds seq i) was added: replaces the contiguous
 * `assistant/chunk` events of the same turn and step right before it by one shared `ChunkRun`.
 * Events that do not round-trip exactly (extra fields, surface metadata) are left as they are.
 */
export function evictChunksBefore(entries: LogEntry[], messageIndex: number): void {
  const message = entries[messageIndex]
  if (message === undefined || message instanceof ChunkRun || message.type !== 'assistant/message') return
  const { turn, step } = message.data
  let start = messageIndex
  while (start > 0) {
    const entry = entries[start - 1]
    if (entry === undefined || entry instanceof ChunkRun || !isPlainChunk(entry, turn, step)) break
    start--
  }
  if (messageIndex - start < MIN_RUN) return
  const run = ChunkRun.of(entries.slice(start, messageIndex) as ChunkEvent[])
  for (let i = start; i < messageIndex; i++) entries[i] = run
}

/** A chunk event of (turn, step) whose keys are exactly what a run rebuilds, in the same order. */
function isPlainChunk(event: SessionEvent, turn: number, step: number): event is ChunkEvent {
  if (event.type !== 'assistant/chunk' || event.data.turn !== turn || event.data.step !== step) return false
  const chunk: object = event.data.chunk
  return (
    sameKeys(event, EVENT_KEYS) &&
    sameKeys(event.data, DATA_KEYS) &&
    typeof event.data.chunk.type === 'string' &&
    !Object.hasOwn(chunk, '__proto__')
  )
}

type Chunk = ChunkEvent['data']['chunk']

/**
 * `[shapes, rows]` as JSON: a shape is `[type, ...keys]` (the chunk's keys in order, `type` among
 * them); `rows` is flat: per chunk its shape's index, then the values of its keys other than `type`.
 * A text delta then costs its text and a few bytes, not its key names again. Shapes are matched by
 * walking the chunk's keys (no key array, no signature string per chunk).
 */
function encodeChunks(chunks: readonly Chunk[]): string {
  const shapes: string[][] = []
  const rows: unknown[] = []
  for (const chunk of chunks) {
    const record = chunk as unknown as Record<string, unknown>
    rows.push(shapeOf(shapes, chunk.type, record))
    for (const key in record) if (key !== 'type') rows.push(record[key])
  }
  return JSON.stringify([shapes, rows])
}

/** The index in `shapes` of the shape of `record` (type `type`), added if new. */
function shapeOf(shapes: string[][], type: string, record: Record<string, unknown>): number {
  search: for (let s = 0; s < shapes.length; s++) {
    const shape = shapes[s] as string[]
    if (shape[0] !== type) continue
    let k = 1
    for (const key in record) if (shape[k++] !== key) continue search
    if (k === shape.length) return s
  }
  const shape = [type]
  for (const key in record) shape.push(key)
  return shapes.push(shape) - 1
}

/** The chunks `encodeChunks` wrote, with their keys in the original order. */
function decodeChunks(json: string): Chunk[] {
  const [shapes, rows] = JSON.parse(json) as [string[][], unknown[]]
  const chunks: Chunk[] = []
  let r = 0
  while (r < rows.length) {
    const shape = shapes[rows[r++] as number] as string[]
    const chunk: Record<string, unknown> = {}
    for (let k = 1; k < shape.length; k++) {
      const key = shape[k] as string
      chunk[key] = key === 'type' ? shape[0] : rows[r++]
    }
    chunks.push(chunk as unknown as Chunk)
  }
  return chunks
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
