/**
 * The compact text of a chunk run: `[shapes, rows]` as JSON. A shape is `[type, ...keys]` (the
 * chunk's keys in order, `type` among them); `rows` is flat: per chunk its shape's index, then the
 * values of its keys other than `type`. A text delta then costs its text and a few bytes, not its key
 * names again.
 */
import type { StreamChunk } from 'dsh-llm'

/**
 * Shapes seen so far, shared by every run: a run's shape list refers to these arrays instead of
 * building its own (they are only read, by `JSON.stringify`). At most `MAX_KNOWN_SHAPES`; past that a
 * new shape gets an array of its own, so an unusual stream cannot grow the table without bound.
 */
const knownShapes: string[][] = []
const MAX_KNOWN_SHAPES = 64

/**
 * The scratch lists the encoder fills and serializes: reused, so encoding a run allocates only its
 * JSON. Safe because encoding is synchronous and serializes only JSON data (no `toJSON` can run).
 * They hold the last run's values until the next run overwrites them.
 */
const runShapes: string[][] = []
const rows: unknown[] = []

/** Encodes the chunks of `events[start, end)` (plain chunk objects with a string `type`). */
export function encodeChunks(
  events: readonly { readonly data: { readonly chunk: StreamChunk } }[],
  start: number,
  end: number,
): string {
  let shapeCount = 0
  let rowCount = 0
  for (let i = start; i < end; i++) {
    const chunk = (events[i] as { readonly data: { readonly chunk: StreamChunk } }).data.chunk
    const record = chunk as unknown as Record<string, unknown>
    let s = 0
    while (s < shapeCount && !fits(runShapes[s] as string[], chunk.type, record)) s++
    if (s === shapeCount) runShapes[shapeCount++] = shapeOf(chunk.type, record)
    rows[rowCount++] = s
    for (const key in record) if (key !== 'type') rows[rowCount++] = record[key]
  }
  runShapes.length = shapeCount
  rows.length = rowCount
  const json = JSON.stringify([runShapes, rows])
  // V8 returns the text as a rope of the serializer's pieces (~1,300 bytes kept for a 1,100-character
  // run); reading a character flattens it in place (~800), and a run is kept for the session's life.
  json.charCodeAt(0)
  return json
}

/** Whether `shape` is the shape of `record` (type `type`). */
function fits(shape: readonly string[], type: string, record: Record<string, unknown>): boolean {
  if (shape[0] !== type) return false
  let k = 1
  for (const key in record) if (shape[k++] !== key) return false
  return k === shape.length
}

/** The shape of `record` (type `type`): a known one, else a new one (remembered while there is room). */
function shapeOf(type: string, record: Record<string, unknown>): string[] {
  for (let s = 0; s < knownShapes.length; s++) {
    const shape = knownShapes[s] as string[]
    if (fits(shape, type, record)) return shape
  }
  const shape = [type]
  for (const key in record) shape.push(key)
  if (knownShapes.length < MAX_KNOWN_SHAPES) knownShapes.push(shape)
  return shape
}

/** The chunks an encoder wrote, with their keys in the original order. */
export function decodeChunks(json: string): StreamChunk[] {
  const [shapes, rows] = JSON.parse(json) as [string[][], unknown[]]
  const chunks: StreamChunk[] = []
  let r = 0
  while (r < rows.length) {
    const shape = shapes[rows[r++] as number] as string[]
    const chunk: Record<string, unknown> = {}
    for (let k = 1; k < shape.length; k++) {
      const key = shape[k] as string
      chunk[key] = key === 'type' ? shape[0] : rows[r++]
    }
    chunks.push(chunk as unknown as StreamChunk)
  }
  return chunks
}
