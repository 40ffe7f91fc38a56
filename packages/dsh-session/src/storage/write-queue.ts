/**
 * A writer's queue of events not yet handed to the backend. For a backend that takes events it holds
 * the events; for one that takes encoded lines (`appendLines`) it encodes each event when it is
 * queued, so a backlog behind a slow backend is bytes in a `LineArena`, not JS strings and objects.
 */
import type { ChunkRef, ChunkRun } from '../chunk-runs.ts'
import type { SessionEvent } from '../types.ts'
import { encodeBatch, lineBytesOver, linePieces, RAW_STRING_UNITS } from './json-lines.ts'
import { eventTexts, runLine } from './jsonl/run-line.ts'
import { STRING_PIECE_UNITS } from './large-event.ts'
import { type EncodedRun, LineArena, SLAB_BYTES } from './line-arena.ts'

/**
 * A queued item: an event or a chunk entry (encoded when its batch is taken), or a run of encoded
 * lines.
 */
export type QueueEntry = SessionEvent | ChunkRef | EncodedRun

/** The head of the queue taken as one batch. */
export interface TakenBatch {
  readonly entries: readonly QueueEntry[]
  /** The size counted for each entry, parallel to `entries`. */
  readonly sizes: readonly number[]
  /** Events in the batch. */
  readonly count: number
  /** The sum of `sizes`. */
  readonly bytes: number
}

/**
 * The most chunk entries one run line holds: a span this long is encoded (and may go out with the
 * next background write) while its run goes on, so a crash mid-stream loses fewer than this many
 * unflushed chunks beyond the usual, and where lines end depends only on the log, never on timing.
 */
const RUN_LINE_ENTRIES = 64

/** Lines collected as text are copied into the arena once they reach this many UTF-16 units. */
const TEXT_UNITS = 64 * 1024

function isRun(entry: QueueEntry): entry is EncodedRun {
  return 'slab' in entry
}

function isChunkRef(entry: SessionEvent | ChunkRef): entry is ChunkRef {
  return 'run' in entry
}

/** The event of a queued event or chunk entry (a chunk entry's is built now). */
export function eventOf(entry: SessionEvent | ChunkRef): SessionEvent {
  return isChunkRef(entry) ? entry.run.at(entry.seq) : entry
}

/** The events of a batch holding no encoded lines (a backend that takes events). */
export function batchEvents(batch: TakenBatch): SessionEvent[] {
  const out: SessionEvent[] = []
  for (const entry of batch.entries) out.push(eventOf(entry as SessionEvent | ChunkRef))
  return out
}

/**
 * `JSON.stringify` of the `assistant/chunk` event of these parts (`chunk`: the chunk's JSON), without
 * building the event: the envelope's keys in their order around the chunk's own text.
 */
function chunkLine(seq: number, time: number, turn: number, step: number, chunk: string): string {
  return `{"type":"assistant/chunk","seq":${seq},"time":${JSON.stringify(time)},"data":{"turn":${turn},"step":${step},"chunk":${chunk}}}`
}

/** The queue. `encode` says whether events are encoded as they are added. */
export class WriteQueue {
  private entries: QueueEntry[] = []
  private sizes: number[] = []
  /** Lines encoded and not yet in `entries`: text, how many events, the size counted for them. */
  private text = ''
  private textCount = 0
  private textSize = 0
  /**
   * Chunk entries queued and not yet in a line: seqs `[spanFirst, spanFirst + spanCount)` of
   * `spanRun`, which become one run line when something else is queued, a barrier takes the batch,
   * or the span reaches `RUN_LINE_ENTRIES` entries or `TEXT_UNITS` (estimated). `spanChunks` holds
   * their chunks' JSON, comma-separated, serialized as each came: by the time the line is made, the
   * log has usually sealed the run (the next event did), and reading its chunks back would decode it.
   */
  private spanRun: ChunkRun | undefined
  private spanFirst = 0
  private spanCount = 0
  private spanSize = 0
  private spanChunks = ''
  private readonly arena: LineArena | undefined

  /**
   * `encode`: encode events as they are added (the backend takes lines), refusing to encode a line
   * over `maxEventBytes` early (its batch then fails when taken). `highWaterMark` sizes the arena.
   */
  constructor(
    encode: boolean,
    private readonly maxEventBytes: number,
    highWaterMark: number,
  ) {
    this.arena = encode ? new LineArena(Math.ceil(highWaterMark / SLAB_BYTES) + 1) : undefined
  }

  /** Whether nothing is queued. */
  get empty(): boolean {
    return this.entries.length === 0 && this.textCount === 0 && this.spanCount === 0
  }

  /**
   * Queues `event` and returns the size counted for it. With `defer` (the queue is over its mark: a
   * producer that does not wait, a fork's seed), the event waits as it is and is encoded when its
   * batch is taken, so a backlog beyond the mark costs no second copy of events the log holds anyway.
   * `estimate`: `estimateBytes(event.data)` if the caller already knows it (else -1).
   */
  add(event: SessionEvent, defer: boolean, estimate = -1): number {
    const arena = this.arena
    if (arena === undefined || defer) return this.push(event, estimate)
    this.closeSpan(arena)
    const longest = longestString(event.data)
    if (longest > STRING_PIECE_UNITS) return this.push(event)
    if (longest >= RAW_STRING_UNITS) return this.addPieces(arena, event)
    return this.addLine(JSON.stringify(event), event)
  }

  /**
   * Queues the chunk entry `seq` of `run` and returns the size counted for it, without an event: it
   * joins the span of chunk entries before it when it continues them (one run line when encoded),
   * unless `defer` (as for `add`). `estimate`: what `estimateBytes` gives for its payload, or -1.
   */
  addChunk(run: ChunkRun, seq: number, defer: boolean, estimate: number): number {
    const arena = this.arena
    if (arena === undefined || defer) return this.push({ run, seq }, estimate)
    const chunk = run.chunkAt(seq)
    const size = (estimate >= 0 ? estimate : 43 + estimateBytes(chunk)) + 16
    if (this.spanRun === run && this.spanFirst + this.spanCount === seq) {
      this.spanChunks += `,${JSON.stringify(chunk)}`
      this.spanCount++
      this.spanSize += size
      if (this.spanCount === RUN_LINE_ENTRIES || this.spanSize >= TEXT_UNITS) this.closeSpan(arena)
      return size
    }
    this.closeSpan(arena)
    // A chunk holding a long string (a rare long block-end) takes the event path, in pieces.
    if (longestString(chunk) >= RAW_STRING_UNITS) return this.add(run.at(seq), false)
    this.spanRun = run
    this.spanFirst = seq
    this.spanCount = 1
    this.spanSize = size
    this.spanChunks = JSON.stringify(chunk)
    return size
  }

  /** Encodes the open span of chunk entries into the collected text: one run line (an event line for one). */
  private closeSpan(arena: LineArena | undefined): void {
    const run = this.spanRun
    if (run === undefined) return
    const first = this.spanFirst
    const count = this.spanCount
    const chunks = this.spanChunks
    const line =
      count === 1
        ? chunkLine(first, run.timeAt(first), run.turn, run.step, chunks)
        : runLine(first, run.turn, run.step, JSON.stringify(run.timesOf(first, count)), `[${chunks}]`)
    this.spanRun = undefined
    this.spanCount = 0
    this.spanChunks = ''
    this.text += `${line}\n`
    this.textCount += count
    this.textSize += this.spanSize
    this.spanSize = 0
    if (arena !== undefined && this.text.length >= TEXT_UNITS) this.seal(arena)
  }

  /** Queues one encoded line (no newline) of `entry`. */
  private addLine(line: string, entry: SessionEvent | ChunkRef): number {
    const arena = this.arena as LineArena
    if (lineBytesOver(line, this.maxEventBytes) !== undefined) return this.push(entry)
    if (this.textCount === 0 && line.length >= TEXT_UNITS) {
      // A long line goes to the arena alone, newline written as a byte (no concatenated copy).
      this.entries.push(arena.store(line, 1, true))
      this.sizes.push(line.length + 1)
      return line.length + 1
    }
    this.text += `${line}\n`
    this.textCount++
    this.textSize += line.length + 1
    if (this.text.length >= TEXT_UNITS) this.seal(arena)
    return line.length + 1
  }

  /** An event holding a long string: its line goes to the arena in pieces, long strings copied once. */
  private addPieces(arena: LineArena, event: SessionEvent): number {
    this.closeSpan(arena)
    const pieces = linePieces(event)
    let units = 1
    for (const piece of pieces) units += piece.length
    if (units * 3 > this.maxEventBytes) {
      let bytes = 0
      for (const piece of pieces) bytes += Buffer.byteLength(piece, 'utf8')
      if (bytes > this.maxEventBytes) return this.push(event)
    }
    if (this.textCount > 0) this.seal(arena)
    this.entries.push(arena.storePieces(pieces, 1, true))
    this.sizes.push(units)
    return units
  }

  /**
   * Whether `take(_, closeSpan)` would take anything: with `closeSpan` false, chunk entries of the
   * open span do not count (they wait for their run to end or for a barrier).
   */
  hasReady(closeSpan: boolean): boolean {
    return this.entries.length > 0 || this.textCount > 0 || (closeSpan && this.spanCount > 0)
  }

  /**
   * Takes the queue's head up to `maxBytes` (at least one entry) as the next batch. `closeSpan`: the
   * chunk entries of the open span go too, as a run line (a barrier); else they stay queued, so a
   * run line ends where its run ends or at a barrier, never where a background write happened to
   * start (the bytes of a file do not depend on write timing). Call only when `hasReady(closeSpan)`.
   */
  take(maxBytes: number, closeSpan = true): TakenBatch {
    if (closeSpan) this.closeSpan(undefined)
    if (this.textCount > 0) this.seal(undefined)
    let bytes = 0
    let taken = 0
    let count = 0
    while (taken < this.sizes.length) {
      const size = this.sizes[taken] ?? 0
      if (taken > 0 && bytes + size > maxBytes) break
      bytes += size
      const entry = this.entries[taken] as QueueEntry
      count += isRun(entry) ? entry.count : 1
      taken++
    }
    let entries: QueueEntry[]
    let sizes: number[]
    if (taken === this.entries.length) {
      entries = this.entries
      sizes = this.sizes
      this.entries = []
      this.sizes = []
    } else {
      entries = this.entries.slice(0, taken)
      sizes = this.sizes.slice(0, taken)
      this.entries = this.entries.slice(taken)
      this.sizes = this.sizes.slice(taken)
    }
    return { entries, sizes, count, bytes }
  }

  /** Puts a batch that failed back at the head of the queue, to be retried first. */
  putBack(batch: TakenBatch): void {
    this.closeSpan(undefined)
    if (this.textCount > 0) this.seal(undefined)
    this.entries = batch.entries.concat(this.entries)
    this.sizes = batch.sizes.concat(this.sizes)
  }

  /** `batch` is durable: the arena may reuse its bytes; an empty queue gives its slabs back. */
  done(batch: TakenBatch): void {
    const arena = this.arena
    if (arena === undefined) return
    for (const entry of batch.entries) if (isRun(entry)) arena.done(entry)
    if (this.empty) arena.trim()
  }

  /**
   * The batch's lines as write chunks: runs as they are, waiting events encoded now (in slices that
   * yield to the event loop when large; `EVENT_TOO_LARGE` naming `sessionId` for one over the limit).
   */
  chunks(batch: TakenBatch, sessionId: string): Uint8Array[] | Promise<Uint8Array[]> {
    const { entries } = batch
    if (entries.length === 1 && isRun(entries[0] as QueueEntry)) return [(entries[0] as EncodedRun).data]
    const out: Uint8Array[] = []
    let i = 0
    while (i < entries.length) {
      const entry = entries[i] as QueueEntry
      if (isRun(entry)) {
        out.push(entry.data)
        i++
        continue
      }
      const events: SessionEvent[] = []
      while (i < entries.length && !isRun(entries[i] as QueueEntry))
        events.push(eventOf(entries[i++] as SessionEvent | ChunkRef))
      const encoded = encodeBatch(sessionId, events, this.maxEventBytes)
      if (!Array.isArray(encoded)) return this.chunksAfter(encoded, out, batch, i, sessionId)
      for (const data of encoded) out.push(data)
    }
    return out
  }

  private async chunksAfter(
    pending: Promise<Buffer[]>,
    out: Uint8Array[],
    batch: TakenBatch,
    from: number,
    sessionId: string,
  ): Promise<Uint8Array[]> {
    for (const data of await pending) out.push(data)
    const rest = await this.chunks({ ...batch, entries: batch.entries.slice(from) }, sessionId)
    for (const data of rest) out.push(data)
    return out
  }

  /** The batch's events as JSON texts (no newline), in order: to compare with what a backend stored. */
  lines(batch: TakenBatch): string[] {
    const out: string[] = []
    for (const entry of batch.entries) {
      if (!isRun(entry)) {
        out.push(JSON.stringify(eventOf(entry)))
        continue
      }
      for (const line of eventTexts(entry.data.toString('utf8'), entry.count)) out.push(line)
    }
    return out
  }

  private push(entry: SessionEvent | ChunkRef, estimate = -1): number {
    this.closeSpan(this.arena)
    if (this.textCount > 0 && this.arena !== undefined) this.seal(this.arena)
    const size =
      (estimate >= 0
        ? estimate
        : isChunkRef(entry)
          ? 43 + estimateBytes(entry.run.chunkAt(entry.seq))
          : estimateBytes(entry.data)) + 64
    this.entries.push(entry)
    this.sizes.push(size)
    return size
  }

  /** Moves the collected lines into `entries`: into the arena, or (a batch about to be written) a buffer of their own. */
  private seal(arena: LineArena | undefined): void {
    const run: EncodedRun =
      arena === undefined
        ? { data: Buffer.from(this.text, 'utf8'), count: this.textCount, slab: undefined }
        : arena.store(this.text, this.textCount, false)
    this.entries.push(run)
    this.sizes.push(this.textSize)
    this.text = ''
    this.textCount = 0
    this.textSize = 0
  }
}

/**
 * A cheap estimate of the JSON size of `value` in bytes: string lengths plus a little per member.
 * Used only to bound memory, so it counts what the queue holds, not exact serialized bytes.
 */
export function estimateBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2
    case 'object': {
      if (value === null) return 4
      let total = 2
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) total += estimateBytes(value[i]) + 1
        return total
      }
      const record = value as Record<string, unknown>
      for (const key in record) total += key.length + 4 + estimateBytes(record[key])
      return total
    }
    default:
      return 8
  }
}

/** The length (UTF-16 units) of the longest string anywhere in `value`; a cheap walk. */
function longestString(value: unknown): number {
  if (typeof value === 'string') return value.length
  if (typeof value !== 'object' || value === null) return 0
  let longest = 0
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) longest = Math.max(longest, longestString(value[i]))
    return longest
  }
  const record = value as Record<string, unknown>
  for (const key in record) longest = Math.max(longest, longestString(record[key]))
  return longest
}
