/**
 * Chunk eviction: once a step's `assistant/message` commits, the `assistant/chunk` events right
 * before it are replaced, in whatever array holds them (a session's log, the memory storage), by one
 * compact `ChunkRun` — the times as unboxed doubles and the chunks as one JSON string of rows against
 * a process-wide table of chunk shapes (type and key order; see `chunk-encoding.ts`) — and decoded
 * back on access into frozen events equal to the originals. One chunk event costs ~200 bytes of heap
 * as objects and ~45 as part of a run. The session and `MemoryStorage` share one run per step.
 */
import { deepFreeze } from 'dsh-llm'
import { decodeChunks, encodeChunks } from './chunk-encoding.ts'
import type { SessionEvent, SessionEventOf } from './types.ts'

type ChunkEvent = SessionEventOf<'assistant/chunk'>

/** A slot of an array of events: the event itself, or the compact run it was folded into. */
export type LogEntry = SessionEvent | ChunkRun

/** Runs shorter than this stay as objects (a run's own overhead would not pay off). */
export const MIN_RUN = 2

/** A contiguous run of one step's `assistant/chunk` events, seqs `first` to `first + length - 1`. */
export class ChunkRun {
  /** The chunks' `time`s, in order (a plain array of numbers: unboxed doubles, counted in the heap). */
  private readonly times: number[]
  private readonly json: string

  private constructor(
    readonly first: number,
    readonly turn: number,
    readonly step: number,
    entries: readonly LogEntry[],
    end: number,
  ) {
    const times = new Array<number>(end - first)
    for (let i = first; i < end; i++) times[i - first] = (entries[i] as ChunkEvent).time
    this.times = times
    this.json = encodeChunks(entries as readonly ChunkEvent[], first, end)
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
   * The run for `entries[start, end)` (one step's plain chunk events, seqs contiguous, slot i holding
   * seq i), which `message` (the step's `assistant/message` event) follows: the run another holder
   * already folded before the same message object if it covers the same seqs, so that holders share
   * it; else a new one, recorded for the next holder.
   */
  static of(entries: readonly LogEntry[], start: number, end: number, message: SessionEvent): ChunkRun {
    const known = runBefore.get(message)
    if (known !== undefined && known.first === start && known.length === end - start) return known
    const head = entries[start] as ChunkEvent
    const run = new ChunkRun(start, head.data.turn, head.data.step, entries, end)
    runBefore.set(message, run)
    return run
  }
}

/**
 * The run folded right before each `assistant/message` event object, while that object lives: the
 * session and `MemoryStorage` hold the same message object (the writer hands the storage the
 * committed events; `load` hands a re-opened session the stored ones; a fork's seed is the source's),
 * so each step's run is built once and shared. One entry per step.
 */
const runBefore = new WeakMap<object, ChunkRun>()
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
  const known = runBefore.get(message)
  if (known !== undefined && foldKnownRun(entries, known, messageIndex)) return
  const { turn, step } = message.data
  let start = messageIndex
  while (start > 0) {
    const entry = entries[start - 1]
    if (entry === undefined || entry instanceof ChunkRun || !isPlainChunk(entry, turn, step)) break
    start--
  }
  if (messageIndex - start < MIN_RUN) return
  const run = ChunkRun.of(entries, start, messageIndex, message)
  for (let i = start; i < messageIndex; i++) entries[i] = run
}

/**
 * Folds `entries[messageIndex - run.length, messageIndex)` into `run`, the run another holder folded
 * before the same message object, when they are its seqs and all chunk events of its turn and step
 * (the same events: both holders got them from the same commit) — without checking each one's keys
 * again. Returns false (nothing changed) otherwise.
 */
function foldKnownRun(entries: LogEntry[], run: ChunkRun, messageIndex: number): boolean {
  const start = messageIndex - run.length
  if (start !== run.first) return false
  for (let i = start; i < messageIndex; i++) {
    const entry = entries[i]
    if (entry === undefined || entry instanceof ChunkRun || entry.type !== 'assistant/chunk') return false
    if (entry.data.turn !== run.turn || entry.data.step !== run.step) return false
  }
  for (let i = start; i < messageIndex; i++) entries[i] = run
  return true
}

/** A chunk event of (turn, step) whose keys are exactly what a run rebuilds, in the same order. */
export function isPlainChunk(event: SessionEvent, turn: number, step: number): event is ChunkEvent {
  if (event.type !== 'assistant/chunk' || event.data.turn !== turn || event.data.step !== step) return false
  const chunk: object = event.data.chunk
  return (
    sameKeys(event, EVENT_KEYS) &&
    sameKeys(event.data, DATA_KEYS) &&
    typeof event.data.chunk.type === 'string' &&
    !Object.hasOwn(chunk, '__proto__')
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
