/**
 * Encoding one large event without holding the event loop: its JSON is produced in pieces (a long
 * string is escaped a piece at a time) and the encoder yields to the event loop after every
 * `SLICE_UNITS` of text, so a 16 MiB tool result costs many short turns instead of one long
 * `JSON.stringify`. The bytes are exactly `JSON.stringify(event)` for the JSON values a session
 * holds (plain objects, arrays, strings, finite numbers, booleans, null).
 */

import type { SessionEvent } from '../types.ts'
import { eventTooLarge } from './event-size.ts'

/** A string longer than this (UTF-16 units) is escaped in pieces of this length. */
export const STRING_PIECE_UNITS = 256 * 1024

/** Text (UTF-16 units) per encoded slice: an encoder yields to the event loop between slices. */
export const SLICE_UNITS = 1024 * 1024

/** Whether `value` holds a string longer than `threshold` units anywhere (a cheap walk). */
export function hasLongString(value: unknown, threshold: number): boolean {
  if (typeof value === 'string') return value.length > threshold
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasLongString(value[i], threshold)) return true
    return false
  }
  const record = value as Record<string, unknown>
  for (const key in record) if (hasLongString(record[key], threshold)) return true
  return false
}

/**
 * The JSON text of `value` as a sequence of pieces whose concatenation equals
 * `JSON.stringify(value)`: members in insertion order, `undefined` members of objects skipped and
 * `undefined` array items written as `null`, as `JSON.stringify` does. A long string is split into
 * pieces of `STRING_PIECE_UNITS`, never between the two halves of a surrogate pair.
 */
export function* jsonPieces(value: unknown): Generator<string> {
  if (typeof value === 'string') {
    if (value.length <= STRING_PIECE_UNITS) {
      yield JSON.stringify(value)
      return
    }
    yield '"'
    for (let start = 0; start < value.length; ) {
      let end = Math.min(start + STRING_PIECE_UNITS, value.length)
      // Keep a surrogate pair in one piece: its halves alone would be escaped as \uXXXX each.
      const last = value.charCodeAt(end - 1)
      if (end < value.length && last >= 0xd800 && last <= 0xdbff) end++
      yield JSON.stringify(value.slice(start, end)).slice(1, -1)
      start = end
    }
    yield '"'
    return
  }
  if (typeof value !== 'object' || value === null) {
    yield JSON.stringify(value) ?? 'null'
    return
  }
  if (Array.isArray(value)) {
    yield '['
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ','
      const item: unknown = value[i]
      if (item === undefined || typeof item === 'function') yield 'null'
      else yield* jsonPieces(item)
    }
    yield ']'
    return
  }
  yield '{'
  let first = true
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    const member = record[key]
    if (member === undefined || typeof member === 'function') continue
    yield `${first ? '' : ','}${JSON.stringify(key)}:`
    first = false
    yield* jsonPieces(member)
  }
  yield '}'
}

/** Resolves on a later turn of the event loop (after pending I/O callbacks). */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve))
}

/**
 * One event's JSON line (newline included) as buffers of about `SLICE_UNITS` each, yielding to the
 * event loop between them; `EVENT_TOO_LARGE` naming `sessionId` once its bytes pass `maxEventBytes`
 * (the size reported is the whole line's, newline excluded).
 */
export async function encodeLargeLine(
  event: SessionEvent,
  sessionId: string,
  maxEventBytes: number,
): Promise<Buffer[]> {
  const buffers: Buffer[] = []
  let bytes = 0
  let text = ''
  for (const piece of jsonPieces(event)) {
    text += piece
    if (text.length < SLICE_UNITS) continue
    const data = Buffer.from(text, 'utf8')
    text = ''
    bytes += data.length
    if (bytes <= maxEventBytes) buffers.push(data)
    else buffers.length = 0
    await nextTurn()
  }
  const last = Buffer.from(`${text}\n`, 'utf8')
  bytes += last.length - 1
  if (bytes > maxEventBytes) throw eventTooLarge(event, bytes, maxEventBytes, sessionId)
  buffers.push(last)
  return buffers
}
