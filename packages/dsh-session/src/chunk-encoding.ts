/**
 * The compact form of a sealed chunk run: one JSON text `[times, shapes, ...rows]` and, beside it,
 * the texts of the blocks it closes, held by reference (`texts`).
 *
 * - `times`: the chunks' times as `[t0, x1, x2, ...]`, each `x` the difference to the previous time
 *   (a positive integer) or `-k` for k equal times in a row; `0` when the times are not all safe
 *   integers in non-decreasing order (the run then keeps its array of times).
 * - `shapes`: `0`, or the run's own shapes (below).
 * - A row is a chunk's shape id, then the values of its keys other than `type`, in order; `rows` is
 *   flat. A shape is `[type, ...keys]` (the chunk's keys in order, `type` among them). Ids below
 *   `LOCAL_SHAPES` index the process-wide table of known shapes (append-only, so an id never changes
 *   meaning); a run holding a shape the full table lacks lists such shapes itself, ids `LOCAL_SHAPES`
 *   upward.
 * - A block whose deltas, in this run since its last `block-start` or `block-end`, make up exactly the
 *   text (or tool-call arguments) its `block-end` carries is written once: each delta row holds its
 *   text's length in place of the text and a negative id `-(id + 1)`, the `block-end` row a negative id
 *   and, in place of the block, its type (text, reasoning) or `[id, name]` (tool call); the block's text
 *   is the next entry of `texts`, the same string the `block-end` chunk held (and the assistant message
 *   built from it holds), so the run adds no copy of it.
 *
 * A text delta then costs a few bytes beyond nothing, its block's text nothing beyond what the
 * message holds, and a run of known shapes (every run in practice) no shape list at all. Decoding
 * gives chunks equal to the encoded ones, keys in their original order.
 */
import type { StreamChunk } from 'dsh-llm'

/** How many shapes the process-wide table holds at most; also the first id of a run's own shapes. */
const LOCAL_SHAPES = 64

/**
 * Shapes seen so far, shared by every run and never changed once added. At most `LOCAL_SHAPES`; past
 * that a new shape is written into the run that holds it, so an unusual stream cannot grow the table
 * without bound.
 */
const knownShapes: string[][] = []

/**
 * The scratch lists the encoder fills: reused, never shortened (setting an array's length to 0
 * drops its backing store, and refilling it regrew it chunk by chunk: ~3.5 KB allocated per tool
 * step). A run's part of `rows` is `[0, rowCount)`; it is copied out exactly once, to be serialized,
 * and cleared after. Safe because encoding is synchronous and serializes only JSON data (no `toJSON`
 * can run).
 */
const localShapes: string[][] = []
const rows: unknown[] = []
/**
 * Per block index: where its delta rows start in `rows`, since its last block-start or block-end. Two
 * parallel lists searched from the end, not a Map: a run has a few blocks, and a Map's `delete` and
 * `clear` reallocate its table (in the tool loop that cost ~15 µs a step).
 */
const openIndexes: number[] = []
const openRows: (number[] | undefined)[] = []
/** How many entries of the two open lists are in use. */
let openCount = 0

/** The delta rows of block `index` so far, removed from the open lists; `undefined` if none. */
function takeOpen(index: number): number[] | undefined {
  for (let i = openCount - 1; i >= 0; i--) {
    if (openIndexes[i] !== index) continue
    const found = openRows[i]
    const last = --openCount
    openIndexes[i] = openIndexes[last] as number
    openRows[i] = openRows[last]
    openRows[last] = undefined
    return found
  }
  return undefined
}

/** Notes delta row `row` of block `index`. */
function noteOpen(index: number, row: number): void {
  for (let i = openCount - 1; i >= 0; i--) {
    if (openIndexes[i] === index) {
      ;(openRows[i] as number[]).push(row)
      return
    }
  }
  openIndexes[openCount] = index
  openRows[openCount++] = [row]
}

/** Empties the open lists. */
function clearOpen(): void {
  for (let i = 0; i < openCount; i++) openRows[i] = undefined
  openCount = 0
}

/** A sealed run's parts: its JSON text, the block texts it refers to, and its times unless encoded. */
export interface EncodedRun {
  readonly json: string
  readonly texts: readonly string[] | undefined
  /** True when `json` carries the times (else the run keeps them). */
  readonly timesEncoded: boolean
}

/**
 * Encodes `chunks` (plain chunk objects with a string `type`) and their `times` (one per chunk).
 * `canonical`: every chunk was built by the session's chunk snapshot (`chunk-snapshot.ts`), so each is
 * one of the common forms with its keys in canonical order, and the rows are written without
 * walking keys or searching shapes.
 */
export function encodeRun(
  chunks: readonly StreamChunk[],
  times: readonly number[],
  canonical = false,
): EncodedRun {
  const timesEncoded = encodeTimes(times)
  texts = undefined
  let rowCount = canonical ? encodeCanonical(chunks) : -1
  let localCount = 0
  if (rowCount < 0) {
    // Another form than the canonical ones (rare): forget what the canonical pass wrote.
    clearOpen()
    rows.fill(undefined, 2)
    texts = undefined
    const general = encodeGeneral(chunks)
    rowCount = general.rowCount
    localCount = general.localCount
  }
  clearOpen()
  rows[1] = localCount === 0 ? 0 : localShapes.slice(0, localCount)
  const runTexts = texts
  texts = undefined
  const json = JSON.stringify(runTexts === undefined ? rows.slice(0, rowCount) : grouped(rowCount))
  rows.fill(undefined, 0, rowCount)
  // V8 returns the text as a rope of the serializer's pieces; reading a character flattens it in
  // place, and a run is kept for the session's life.
  json.charCodeAt(0)
  return { json, texts: runTexts, timesEncoded }
}

/** The block texts the run being encoded refers to (exactly as long as needed), while encoding. */
let texts: string[] | undefined

/** The ids of the canonical chunk forms in the known table, once looked up; `null` if it was full. */
interface CanonicalIds {
  readonly textDelta: number
  readonly reasoningDelta: number
  readonly blockStart: number
  readonly blockEnd: number
  readonly usage: number
  readonly finish: number
  /** `tool-call-delta` without `id` and `name`, with `id`, with `name`, with both. */
  readonly callDelta: readonly [number, number, number, number]
}
let canonicalIds: CanonicalIds | null | undefined

function lookUpCanonicalIds(): CanonicalIds | null {
  const id = (shape: string[]): number => {
    for (let s = 0; s < knownShapes.length; s++) {
      const known = knownShapes[s] as string[]
      if (known.length === shape.length && known.every((key, k) => key === shape[k])) return s
    }
    if (knownShapes.length === LOCAL_SHAPES) return -1
    knownShapes.push(shape)
    return knownShapes.length - 1
  }
  const ids = [
    id(['text-delta', 'type', 'index', 'text']),
    id(['reasoning-delta', 'type', 'index', 'text']),
    id(['block-start', 'type', 'index', 'blockType']),
    id(['block-end', 'type', 'index', 'block']),
    id(['usage', 'type', 'usage']),
    id(['finish', 'type', 'reason']),
    id(['tool-call-delta', 'type', 'index', 'argumentsDelta']),
    id(['tool-call-delta', 'type', 'index', 'id', 'argumentsDelta']),
    id(['tool-call-delta', 'type', 'index', 'name', 'argumentsDelta']),
    id(['tool-call-delta', 'type', 'index', 'id', 'name', 'argumentsDelta']),
  ] as const
  if (ids.some((value) => value < 0)) return null
  return {
    textDelta: ids[0],
    reasoningDelta: ids[1],
    blockStart: ids[2],
    blockEnd: ids[3],
    usage: ids[4],
    finish: ids[5],
    callDelta: [ids[6], ids[7], ids[8], ids[9]],
  }
}

/**
 * The rows of a run of canonical chunks, written by type with named reads: the row count, or -1
 * when the known table has no room for the canonical shapes or a chunk is of another form (then
 * the general encoder writes the run).
 */
function encodeCanonical(chunks: readonly StreamChunk[]): number {
  if (canonicalIds === undefined) canonicalIds = lookUpCanonicalIds()
  const ids = canonicalIds
  if (ids === null) return -1
  let rowCount = 2
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i] as StreamChunk
    const row = rowCount
    switch (chunk.type) {
      case 'text-delta':
      case 'reasoning-delta':
        rows[rowCount++] = chunk.type === 'text-delta' ? ids.textDelta : ids.reasoningDelta
        rows[rowCount++] = chunk.index
        rows[rowCount++] = chunk.text
        noteOpen(chunk.index, row)
        break
      case 'tool-call-delta': {
        const { id, name } = chunk
        rows[rowCount++] = ids.callDelta[(id === undefined ? 0 : 1) + (name === undefined ? 0 : 2)]
        rows[rowCount++] = chunk.index
        if (id !== undefined) rows[rowCount++] = id
        if (name !== undefined) rows[rowCount++] = name
        rows[rowCount++] = chunk.argumentsDelta
        noteOpen(chunk.index, row)
        break
      }
      case 'block-start':
        rows[rowCount++] = ids.blockStart
        rows[rowCount++] = chunk.index
        rows[rowCount++] = chunk.blockType
        takeOpen(chunk.index)
        break
      case 'block-end': {
        rows[rowCount++] = ids.blockEnd
        rows[rowCount++] = chunk.index
        rows[rowCount++] = chunk.block
        const deltas = takeOpen(chunk.index)
        const block = chunk.block
        let text: string | undefined
        if (block.type === 'text') text = spelled(block.text, 'text-delta', deltas)
        else if (block.type === 'reasoning') text = spelled(block.text, 'reasoning-delta', deltas)
        else if (block.type === 'tool-call') text = spelled(block.arguments, 'tool-call-delta', deltas)
        if (text !== undefined) referToText(text, deltas as number[], row, rowCount, block)
        break
      }
      case 'usage':
        rows[rowCount++] = ids.usage
        rows[rowCount++] = chunk.usage
        break
      case 'finish':
        rows[rowCount++] = ids.finish
        rows[rowCount++] = chunk.reason
        break
      default:
        return -1
    }
  }
  return rowCount
}

/**
 * Rewrites a block's rows to refer to its text (`text`, from the block-end at `row`, whose last
 * value sits at `end - 1`): each delta row at `deltas` holds its text's length and a negative id,
 * the block-end row a negative id and the block's type (or `[id, name]` of a tool call).
 */
function referToText(
  text: string,
  deltas: readonly number[],
  row: number,
  end: number,
  block: unknown,
): void {
  for (const at of deltas) {
    const deltaShape = shapeById(rows[at] as number)
    const last = at + deltaShape.length - 2
    rows[last] = (rows[last] as string).length
    rows[at] = -(rows[at] as number) - 1
  }
  rows[row] = -(rows[row] as number) - 1
  const record = block as Record<string, unknown>
  rows[end - 1] = record.type === 'tool-call' ? [record.id, record.name] : record.type
  // Exactly as long as it needs to be: a pushed-to array keeps spare room for the run's life.
  if (texts === undefined) texts = [text]
  else texts = texts.concat(text)
}

/** The rows of any run, each chunk's shape found by walking its keys; and how many own shapes it has. */
function encodeGeneral(chunks: readonly StreamChunk[]): { rowCount: number; localCount: number } {
  let localCount = 0
  let rowCount = 2
  // The shape of the previous chunk (and its id), tried first: a stream repeats one shape for long.
  let shape: readonly string[] = EMPTY_SHAPE
  let id = 0
  for (let i = 0; i < chunks.length; i++) {
    const record = chunks[i] as unknown as Record<string, unknown>
    const type = record.type as string
    const row = rowCount
    let written = false
    if (shape[0] === type) {
      // One pass: check the keys against the shape while copying the values.
      rows[rowCount++] = id
      let k = 1
      for (const key in record) {
        if (shape[k++] !== key) {
          k = -1
          break
        }
        if (key !== 'type') rows[rowCount++] = record[key]
      }
      if (k === shape.length) written = true
      else rowCount = row
    }
    if (!written) {
      id = knownShapeId(type, record)
      if (id < 0) {
        let s = 0
        while (s < localCount && !fits(localShapes[s] as string[], type, record)) s++
        if (s === localCount) localShapes[localCount++] = shapeOf(type, record)
        id = LOCAL_SHAPES + s
        shape = localShapes[s] as string[]
      } else shape = knownShapes[id] as string[]
      rows[rowCount++] = id
      for (const key in record) if (key !== 'type') rows[rowCount++] = record[key]
    }
    // Blocks: remember delta rows per index; a block-end whose deltas spell its text refers to them.
    const index = record.index
    if (typeof index !== 'number') continue
    if (type === 'block-start') takeOpen(index)
    else if (deltaKey(type) !== undefined && shape[shape.length - 1] === deltaKey(type)) {
      noteOpen(index, row)
    } else if (type === 'block-end') {
      const deltas = takeOpen(index)
      const text = shape[shape.length - 1] === 'block' ? derivable(record.block, deltas) : undefined
      if (text !== undefined) referToText(text, deltas as number[], row, rowCount, record.block)
    }
  }
  return { rowCount, localCount }
}

/** The scratch list `grouped` fills (like `rows`, never shortened). */
const packed: unknown[] = []

/**
 * `rows[0, end)` as a new array, with each stretch of two or more delta rows that hold only a length
 * (`[-(id + 1), index, length]`), of one shape and one index, written as one row
 * `[[-(id + 1), index, length, ...]]`.
 */
function grouped(end: number): unknown[] {
  let out = 0
  packed[out++] = rows[0]
  packed[out++] = rows[1]
  let r = 2
  while (r < end) {
    const id = rows[r] as number
    const shape = shapeById(id < 0 ? -id - 1 : id)
    const width = shape.length - 1
    if (id >= 0 || width !== 3 || shape[0] === 'block-end' || r + width >= end || rows[r + width] !== id) {
      for (let k = 0; k < width; k++) packed[out++] = rows[r + k]
      r += width
      continue
    }
    const index = rows[r + 1]
    const group: unknown[] = [id, index]
    while (r < end && rows[r] === id && rows[r + 1] === index) {
      group.push(rows[r + 2])
      r += 3
    }
    packed[out++] = group
  }
  const list = packed.slice(0, out)
  packed.fill(undefined, 0, out)
  return list
}

/**
 * The text of `block` (a block-end's) if it is a text, reasoning or tool-call block of exactly its
 * canonical keys whose text (arguments) is the concatenation, in order, of the texts of the delta
 * rows at `deltas`, all of the block's delta type; else `undefined`.
 */
function derivable(block: unknown, deltas: readonly number[] | undefined): string | undefined {
  if (deltas === undefined || typeof block !== 'object' || block === null) return undefined
  const record = block as Record<string, unknown>
  if (Object.getPrototypeOf(record) !== Object.prototype) return undefined
  const type = record.type
  let deltaType: string
  let text: unknown
  if (type === 'text' || type === 'reasoning') {
    if (!hasExactly(record, TEXT_BLOCK_KEYS)) return undefined
    deltaType = type === 'text' ? 'text-delta' : 'reasoning-delta'
    text = record.text
  } else if (type === 'tool-call') {
    if (!hasExactly(record, CALL_BLOCK_KEYS)) return undefined
    if (typeof record.id !== 'string' || typeof record.name !== 'string') return undefined
    deltaType = 'tool-call-delta'
    text = record.arguments
  } else return undefined
  if (typeof text !== 'string') return undefined
  return spelled(text, deltaType, deltas)
}

/**
 * `text` if the delta rows at `deltas`, all of type `deltaType`, spell it exactly, in order; else
 * `undefined`.
 */
function spelled(text: string, deltaType: string, deltas: readonly number[] | undefined): string | undefined {
  if (deltas === undefined) return undefined
  let offset = 0
  for (let d = 0; d < deltas.length; d++) {
    const at = deltas[d] as number
    const shape = shapeById(rows[at] as number)
    if (shape[0] !== deltaType) return undefined
    const piece = rows[at + shape.length - 2]
    if (typeof piece !== 'string' || !text.startsWith(piece, offset)) return undefined
    offset += piece.length
  }
  return offset === text.length ? text : undefined
}

const TEXT_BLOCK_KEYS = ['type', 'text']
const CALL_BLOCK_KEYS = ['type', 'id', 'name', 'arguments']

function hasExactly(record: Record<string, unknown>, keys: readonly string[]): boolean {
  let i = 0
  for (const key in record) {
    if (key !== keys[i] || !Object.hasOwn(record, key)) return false
    i++
  }
  return i === keys.length
}

/** The key of a delta chunk type that carries its text, or `undefined` for other types. */
function deltaKey(type: string): string | undefined {
  if (type === 'text-delta' || type === 'reasoning-delta') return 'text'
  if (type === 'tool-call-delta') return 'argumentsDelta'
  return undefined
}

/** A shape by its (non-negative) id while encoding: known, or one of the run's own. */
function shapeById(id: number): readonly string[] {
  return (id < LOCAL_SHAPES ? knownShapes[id] : localShapes[id - LOCAL_SHAPES]) as string[]
}

/** Writes `times` into `rows[0]` in the compact form, or 0 when they do not fit it; whether they did. */
function encodeTimes(times: readonly number[]): boolean {
  const first = times[0]
  if (first === undefined || !Number.isSafeInteger(first) || Object.is(first, -0)) {
    rows[0] = 0
    return false
  }
  const out: number[] = [first]
  let previous = first
  let same = 0
  for (let i = 1; i < times.length; i++) {
    const time = times[i] as number
    if (!Number.isSafeInteger(time) || time < previous) {
      rows[0] = 0
      return false
    }
    if (time === previous) {
      same++
      continue
    }
    if (same > 0) out.push(-same)
    same = 0
    out.push(time - previous)
    previous = time
  }
  if (same > 0) out.push(-same)
  rows[0] = out
  return true
}

const EMPTY_SHAPE: readonly string[] = []

/** The id of `record`'s shape (type `type`) in the known table, adding it while there is room; -1 if full. */
function knownShapeId(type: string, record: Record<string, unknown>): number {
  for (let s = 0; s < knownShapes.length; s++) {
    if (fits(knownShapes[s] as string[], type, record)) return s
  }
  if (knownShapes.length === LOCAL_SHAPES) return -1
  knownShapes.push(shapeOf(type, record))
  return knownShapes.length - 1
}

/** Whether `shape` is the shape of `record` (type `type`). */
function fits(shape: readonly string[], type: string, record: Record<string, unknown>): boolean {
  if (shape[0] !== type) return false
  let k = 1
  for (const key in record) if (shape[k++] !== key) return false
  return k === shape.length
}

/** A new shape array for `record` (type `type`). */
function shapeOf(type: string, record: Record<string, unknown>): string[] {
  const shape = [type]
  for (const key in record) shape.push(key)
  return shape
}

/** A decoded run: its chunks (keys in the original order, not frozen) and, if encoded, its times. */
export interface DecodedRun {
  readonly chunks: StreamChunk[]
  readonly times: number[] | undefined
}

/** The chunks (and times, when the text carries them) of a run `encodeRun` wrote. */
export function decodeRun(json: string, texts: readonly string[] | undefined): DecodedRun {
  const parsed = JSON.parse(json) as unknown[]
  const own = parsed[1] === 0 ? undefined : (parsed[1] as string[][])
  const chunks: StreamChunk[] = []
  const waiting = new Map<number, Record<string, unknown>[]>()
  let nextText = 0
  let r = 2
  while (r < parsed.length) {
    const head = parsed[r++]
    if (Array.isArray(head)) {
      expandGroup(head as number[], own, chunks, waiting)
      continue
    }
    let id = head as number
    const derived = id < 0
    if (derived) id = -id - 1
    const shape = (id < LOCAL_SHAPES ? knownShapes[id] : (own as string[][])[id - LOCAL_SHAPES]) as string[]
    const chunk: Record<string, unknown> = {}
    for (let k = 1; k < shape.length; k++) {
      const key = shape[k] as string
      chunk[key] = key === 'type' ? shape[0] : parsed[r++]
    }
    chunks.push(chunk as unknown as StreamChunk)
    if (!derived) continue
    const index = chunk.index as number
    if (shape[0] !== 'block-end') {
      // A delta whose text is a slice of its block's text: filled in at the block-end.
      const list = waiting.get(index)
      if (list === undefined) waiting.set(index, [chunk])
      else list.push(chunk)
      continue
    }
    const text = (texts as readonly string[])[nextText++] as string
    const form = chunk.block
    chunk.block = Array.isArray(form)
      ? { type: 'tool-call', id: form[0], name: form[1], arguments: text }
      : { type: form, text }
    let offset = 0
    for (const delta of waiting.get(index) ?? []) {
      const key = delta.type === 'tool-call-delta' ? 'argumentsDelta' : 'text'
      const length = delta[key] as number
      delta[key] = text.slice(offset, offset + length)
      offset += length
    }
    waiting.delete(index)
  }
  return { chunks, times: parsed[0] === 0 ? undefined : decodeTimes(parsed[0] as number[]) }
}

/** Decodes a group row `[-(id + 1), index, length, ...]`: delta chunks waiting for their block's text. */
function expandGroup(
  group: readonly number[],
  own: readonly string[][] | undefined,
  chunks: StreamChunk[],
  waiting: Map<number, Record<string, unknown>[]>,
): void {
  const id = -(group[0] as number) - 1
  const shape = (id < LOCAL_SHAPES ? knownShapes[id] : (own as string[][])[id - LOCAL_SHAPES]) as string[]
  const index = group[1] as number
  let list = waiting.get(index)
  if (list === undefined) {
    list = []
    waiting.set(index, list)
  }
  for (let g = 2; g < group.length; g++) {
    const chunk: Record<string, unknown> = {}
    for (let k = 1; k < shape.length; k++) {
      const key = shape[k] as string
      chunk[key] = key === 'type' ? shape[0] : key === 'index' ? index : group[g]
    }
    chunks.push(chunk as unknown as StreamChunk)
    list.push(chunk)
  }
}

/**
 * The times an `encodeRun` text carries, read from its first member without `JSON.parse` (a writer
 * needs a sealed run's times, not its chunks); `undefined` when the run keeps its times itself.
 * The member is a flat list of safe integers, which JSON writes as plain decimals.
 */
export function decodeRunTimes(json: string): number[] | undefined {
  if (json.charCodeAt(1) !== 91 /* [ */) return undefined
  const encoded: number[] = []
  let i = 2
  for (;;) {
    let sign = 1
    if (json.charCodeAt(i) === 45 /* - */) {
      sign = -1
      i++
    }
    let value = 0
    let c = json.charCodeAt(i)
    while (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48)
      c = json.charCodeAt(++i)
    }
    encoded.push(sign * value)
    i++
    if (c === 93 /* ] */) break
  }
  return decodeTimes(encoded)
}

function decodeTimes(encoded: readonly number[]): number[] {
  let time = encoded[0] as number
  const times = [time]
  for (let i = 1; i < encoded.length; i++) {
    const x = encoded[i] as number
    if (x < 0) for (let k = 0; k < -x; k++) times.push(time)
    else {
      time += x
      times.push(time)
    }
  }
  return times
}
