/**
 * The compact text of a chunk run: its rows as JSON. A row is a chunk's shape id, then the values of
 * its keys other than `type`, in order; `rows` is flat. A shape is `[type, ...keys]` (the chunk's keys
 * in order, `type` among them). Shape ids below `LOCAL_SHAPES` index the process-wide table of known
 * shapes (append-only, so an id never changes meaning); a run holding a shape the full table lacks
 * writes its own list of such shapes first (`[[shape, ...], rows]`), ids `LOCAL_SHAPES` upward. A text
 * delta then costs its text and a few bytes, not its key names again, and a run of known shapes (every
 * run in practice) no shape list at all.
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
 * The scratch lists the encoder fills and serializes: reused, so encoding a run allocates only its
 * JSON. Safe because encoding is synchronous and serializes only JSON data (no `toJSON` can run).
 * They hold the last run's values until the next run overwrites them.
 */
const localShapes: string[][] = []
const rows: unknown[] = []

/** Encodes `chunks[start, end)` (plain chunk objects with a string `type`). */
export function encodeChunks(chunks: readonly StreamChunk[], start: number, end: number): string {
  let localCount = 0
  let rowCount = 0
  // The shape of the previous chunk (and its id), tried first: a stream repeats one shape for long.
  let shape: readonly string[] = EMPTY_SHAPE
  let id = 0
  for (let i = start; i < end; i++) {
    const record = chunks[i] as unknown as Record<string, unknown>
    const type = record.type as string
    const row = rowCount
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
      if (k === shape.length) continue
      rowCount = row
    }
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
  rows.length = rowCount
  let json: string
  if (localCount === 0) json = JSON.stringify(rows)
  else {
    localShapes.length = localCount
    json = JSON.stringify([localShapes, rows])
  }
  // V8 returns the text as a rope of the serializer's pieces (~1,300 bytes kept for a 1,100-character
  // run); reading a character flattens it in place (~800), and a run is kept for the session's life.
  json.charCodeAt(0)
  return json
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

/** The chunks an encoder wrote, with their keys in the original order. */
export function decodeChunks(json: string): StreamChunk[] {
  const parsed = JSON.parse(json) as unknown[]
  // Rows start with a shape id (a number); a run with shapes of its own starts with their list.
  const own = Array.isArray(parsed[0]) ? (parsed[0] as string[][]) : undefined
  const rows = own === undefined ? parsed : (parsed[1] as unknown[])
  const chunks: StreamChunk[] = []
  let r = 0
  while (r < rows.length) {
    const id = rows[r++] as number
    const shape = (id < LOCAL_SHAPES ? knownShapes[id] : (own as string[][])[id - LOCAL_SHAPES]) as string[]
    const chunk: Record<string, unknown> = {}
    for (let k = 1; k < shape.length; k++) {
      const key = shape[k] as string
      chunk[key] = key === 'type' ? shape[0] : rows[r++]
    }
    chunks.push(chunk as unknown as StreamChunk)
  }
  return chunks
}
