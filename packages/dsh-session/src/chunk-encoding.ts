/**
 * The compact text of a chunk run: `[shapes, rows]` as JSON. A shape is `[type, ...keys]` (the
 * chunk's keys in order, `type` among them); `rows` is flat: per chunk its shape's index, then the
 * values of its keys other than `type`. A text delta then costs its text and a few bytes, not its key
 * names again.
 */
import type { StreamChunk } from 'dsh-llm'

/** Encodes the chunks of `events[start, end)` (plain chunk objects with a string `type`). */
export function encodeChunks(
  events: readonly { readonly data: { readonly chunk: StreamChunk } }[],
  start: number,
  end: number,
): string {
  const shapes: string[][] = []
  const rows: unknown[] = []
  for (let i = start; i < end; i++) {
    const chunk = (events[i] as { readonly data: { readonly chunk: StreamChunk } }).data.chunk
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
