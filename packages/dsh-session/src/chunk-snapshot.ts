/**
 * The common `assistant/chunk` payload, snapshotted and validated in one hand-written pass: the
 * deltas, block starts and simple block ends that make up nearly every event a model stream logs.
 * It returns exactly what `snapshotJson` would (a frozen copy with the same keys in the same order)
 * for a value the payload schema accepts, and `undefined` for anything else — the caller then takes
 * the general path, which decides and names the defect. So the fast path never changes a verdict,
 * an error or a stored byte; it only skips the generic walk and the separate schema check.
 */
import type { CallId, ContentBlock, FinishReason, StreamChunk, Usage } from 'dsh-llm'
import { isFinishReason, isUsage } from './fast-blocks.ts'
import { tryQuickSnapshot } from './snapshot.ts'

/**
 * An upper bound of the JSON bytes of a delta, block-start or block-end payload `snapshotChunkData`
 * built, beyond its strings' own `MAX_BYTES_PER_UNIT` per unit: keys, punctuation, quotes, `turn`,
 * `step` and `index` (safe integers, at most 16 digits each).
 */
const FIXED_BYTES = 512
/** The most UTF-8 bytes one UTF-16 unit can become in JSON (a control character as `\u001f`). */
const MAX_BYTES_PER_UNIT = 6

/**
 * An upper bound of the serialized size of `data`, a payload `snapshotChunkData` returned (so its
 * keys are exactly the canonical ones): what the size limit needs, without walking its keys.
 * `Infinity` (measure it the general way) for `usage` and `finish`, whose members are open records.
 */
export function chunkDataBound(data: ChunkData): number {
  return chunkBound(data.chunk)
}

/** `chunkDataBound` of the payload holding `chunk` (a chunk `snapshotChunk` built). */
export function chunkBound(chunk: StreamChunk): number {
  let units = chunk.type.length
  switch (chunk.type) {
    case 'text-delta':
    case 'reasoning-delta':
      units += chunk.text.length
      break
    case 'block-start':
      units += chunk.blockType.length
      break
    case 'tool-call-delta':
      units += (chunk.id?.length ?? 0) + (chunk.name?.length ?? 0) + chunk.argumentsDelta.length
      break
    case 'block-end': {
      const block = chunk.block
      units += block.type.length
      if (block.type === 'text' || block.type === 'reasoning') units += block.text.length
      else if (block.type === 'tool-call')
        units += block.id.length + block.name.length + block.arguments.length
      else return Number.POSITIVE_INFINITY
      break
    }
    default:
      // `usage` and `finish` members may carry extra keys: leave them to the general measure.
      return Number.POSITIVE_INFINITY
  }
  return MAX_BYTES_PER_UNIT * units + FIXED_BYTES
}

/**
 * `estimateBytes(data)` of the writer's queue (string lengths plus a little per member) for a payload
 * `snapshotChunkData` built, from its strings' lengths alone: the queue then need not walk it. -1 for
 * `usage` and `finish` (open records: the queue walks them). `write-queue.test.ts` checks the two
 * agree for every form.
 */
export function chunkDataEstimate(data: ChunkData): number {
  return chunkEstimate(data.chunk)
}

/** `chunkDataEstimate` of the payload holding `chunk` (a chunk `snapshotChunk` built). */
export function chunkEstimate(chunk: StreamChunk): number {
  // {turn, step, chunk} around the chunk, and the chunk's own `type` and `index` members.
  const base = 43 + 29 + chunk.type.length
  switch (chunk.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return base + 10 + chunk.text.length
    case 'block-start':
      return base + 15 + chunk.blockType.length
    case 'tool-call-delta':
      return (
        base +
        20 +
        chunk.argumentsDelta.length +
        (chunk.id === undefined ? 0 : 8 + chunk.id.length) +
        (chunk.name === undefined ? 0 : 10 + chunk.name.length)
      )
    case 'block-end': {
      const block = chunk.block
      if (block.type === 'text' || block.type === 'reasoning')
        return base + 9 + 22 + block.type.length + block.text.length
      if (block.type === 'tool-call')
        return (
          base + 9 + 45 + block.type.length + block.id.length + block.name.length + block.arguments.length
        )
      return -1
    }
    default:
      return -1
  }
}

/** The `assistant/chunk` payload. */
export interface ChunkData {
  readonly turn: number
  readonly step: number
  readonly chunk: StreamChunk
}

const DATA_KEYS = ['turn', 'step', 'chunk']
const DELTA_KEYS = ['type', 'index', 'text']
const START_KEYS = ['type', 'index', 'blockType']
const END_KEYS = ['type', 'index', 'block']
const USAGE_KEYS = ['type', 'usage']
const FINISH_KEYS = ['type', 'reason']
const TEXT_BLOCK_KEYS = ['type', 'text']
const CALL_BLOCK_KEYS = ['type', 'id', 'name', 'arguments']
/** The key orders of a `tool-call-delta` the fast path takes (`id` and `name` optional, in this order). */
const CALL_DELTA_KEYS = [
  ['type', 'index', 'argumentsDelta'],
  ['type', 'index', 'id', 'argumentsDelta'],
  ['type', 'index', 'name', 'argumentsDelta'],
  ['type', 'index', 'id', 'name', 'argumentsDelta'],
]

/**
 * A frozen copy of `value` if it is an `assistant/chunk` payload in the common form — a plain
 * object `{turn, step, chunk}` (ordinals) whose chunk is a text or reasoning delta, a tool-call
 * delta, a block start, a block end carrying a text, reasoning or tool-call block, a usage or a
 * known finish — each a plain object of exactly its keys in their canonical order —
 * else `undefined` (take the general path).
 */
export function snapshotChunkData(value: unknown): ChunkData | undefined {
  if (!isPlain(value) || !hasKeys(value, DATA_KEYS)) return undefined
  const { turn, step } = value
  if (!isOrdinal(turn) || !isOrdinal(step)) return undefined
  const chunk = snapshotChunk(value.chunk)
  return chunk === undefined ? undefined : Object.freeze({ turn, step, chunk })
}

/**
 * The chunk part of `snapshotChunkData`: a frozen copy of `value` if it is a stream chunk in the
 * common form, else `undefined` (take the general path). With `freeze` false, a delta's or block
 * start's copy (the forms without nested objects) is left unfrozen, for a caller that freezes it
 * before it can escape (see `LiveSession.commitChunk`); every nested object is frozen either way.
 */
export function snapshotChunk(value: unknown, freeze = true): StreamChunk | undefined {
  if (!isPlain(value)) return undefined
  const { type, index } = value
  if (!isCount(index)) return copyTail(value)
  switch (type) {
    case 'text-delta':
    case 'reasoning-delta': {
      const text = value.text
      if (typeof text !== 'string' || !hasKeys(value, DELTA_KEYS)) return undefined
      const copy = { type, index, text }
      return freeze ? Object.freeze(copy) : copy
    }
    case 'block-start': {
      const blockType = value.blockType
      if (typeof blockType !== 'string' || !hasKeys(value, START_KEYS)) return undefined
      const copy = { type, index, blockType } as StreamChunk
      return freeze ? Object.freeze(copy) : copy
    }
    case 'tool-call-delta': {
      const copy = copyCallDelta(value, index)
      return freeze && copy !== undefined ? Object.freeze(copy) : copy
    }
    case 'block-end': {
      if (!hasKeys(value, END_KEYS)) return undefined
      const block = copyBlock(value.block)
      return block === undefined ? undefined : Object.freeze({ type, index, block })
    }
    default:
      return undefined
  }
}

/** A `usage` or `finish` chunk (no index): its one member copied by the quick snapshot, then checked. */
function copyTail(value: Readonly<Record<string, unknown>>): StreamChunk | undefined {
  switch (value.type) {
    case 'usage': {
      if (!hasKeys(value, USAGE_KEYS)) return undefined
      const usage = tryQuickSnapshot(value.usage)
      return isUsage(usage) ? Object.freeze({ type: 'usage', usage: usage as Usage }) : undefined
    }
    case 'finish': {
      if (!hasKeys(value, FINISH_KEYS)) return undefined
      const reason = tryQuickSnapshot(value.reason)
      return isFinishReason(reason)
        ? Object.freeze({ type: 'finish', reason: reason as FinishReason })
        : undefined
    }
    default:
      return undefined
  }
}

function copyCallDelta(value: Readonly<Record<string, unknown>>, index: number): StreamChunk | undefined {
  const { id, name, argumentsDelta } = value
  if (typeof argumentsDelta !== 'string') return undefined
  const hasId = id !== undefined
  const hasName = name !== undefined
  if ((hasId && (typeof id !== 'string' || id === '')) || (hasName && typeof name !== 'string'))
    return undefined
  const keys = CALL_DELTA_KEYS[(hasId ? 1 : 0) + (hasName ? 2 : 0)] as readonly string[]
  if (!hasKeys(value, keys)) return undefined
  const type = 'tool-call-delta'
  const chunk = hasId
    ? hasName
      ? { type, index, id, name, argumentsDelta }
      : { type, index, id, argumentsDelta }
    : hasName
      ? { type, index, name, argumentsDelta }
      : { type, index, argumentsDelta }
  // Not frozen here: `snapshotChunk` freezes it (or leaves it to its caller).
  return chunk as StreamChunk
}

function copyBlock(value: unknown): ContentBlock | undefined {
  if (!isPlain(value)) return undefined
  switch (value.type) {
    case 'text':
    case 'reasoning': {
      const { type, text } = value
      if (typeof text !== 'string' || !hasKeys(value, TEXT_BLOCK_KEYS)) return undefined
      return Object.freeze({ type, text })
    }
    case 'tool-call': {
      const { id, name } = value
      const args = value.arguments
      if (typeof id !== 'string' || id === '' || typeof name !== 'string' || typeof args !== 'string')
        return undefined
      if (!hasKeys(value, CALL_BLOCK_KEYS)) return undefined
      return Object.freeze({ type: 'tool-call', id: id as CallId, name, arguments: args })
    }
    default:
      return undefined
  }
}

/** An object whose prototype is `Object.prototype` (what the general walk copies without a detour). */
function isPlain(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
}

/**
 * The enumerable string keys of `value` are exactly `keys`, in this order, all its own. `for...in`
 * visits an object's own keys before any inherited one, so the last key being its own makes them all
 * its own: one `Object.hasOwn` instead of one per key.
 */
function hasKeys(value: object, keys: readonly string[]): boolean {
  let i = 0
  for (const key in value) {
    if (key !== keys[i]) return false
    i++
  }
  return i === keys.length && Object.hasOwn(value, keys[i - 1] as string)
}

/** A non-negative safe integer other than -0 (which JSON cannot carry). */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0)
}

/** A positive safe integer (a turn or step number). */
export function isOrdinal(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}
