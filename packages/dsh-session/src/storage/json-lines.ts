/**
 * Events as JSON lines: each event's `JSON.stringify` followed by `\n`, in UTF-8. This is the JSONL
 * file's event format and what `SessionStorage.appendLines` takes; a batch is encoded in slices so
 * that encoding never holds the event loop for long.
 */
import type { SessionEvent } from '../types.ts'
import { eventTooLarge } from './event-size.ts'
import { encodeLargeLine, hasLongString, nextTurn, SLICE_UNITS, STRING_PIECE_UNITS } from './large-event.ts'

/**
 * Whether `event` must be encoded in pieces (`encodeLargeLine`): it holds a string so long that one
 * `JSON.stringify` of it would hold the event loop.
 */
export function needsPieces(event: SessionEvent): boolean {
  return hasLongString(event.data, STRING_PIECE_UNITS)
}

/** A string at least this long (UTF-16 units) that needs no escaping is copied into its line as it is. */
export const RAW_STRING_UNITS = 16 * 1024

/** What `JSON.stringify` escapes in a string (lone surrogates included: any surrogate goes the slow way). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes; matching them is the point.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/**
 * `JSON.stringify(value)` as pieces to be written one after another, for a value holding strings of
 * `RAW_STRING_UNITS` or more: such a string that needs no escaping is a piece of its own, as it is
 * (the caller copies it once, into its buffer, instead of into a whole-line string first); every
 * subtree without one is one `JSON.stringify` piece. Same members, order and `undefined` handling
 * as `JSON.stringify` for the plain JSON values a session holds.
 */
export function linePieces(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.length >= RAW_STRING_UNITS && !NEEDS_ESCAPE.test(value)) out.push('"', value, '"')
    else out.push(JSON.stringify(value))
    return out
  }
  if (typeof value !== 'object' || value === null || !hasLongString(value, RAW_STRING_UNITS - 1)) {
    out.push(JSON.stringify(value) ?? 'null')
    return out
  }
  if (Array.isArray(value)) {
    out.push('[')
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',')
      const item: unknown = value[i]
      if (item === undefined || typeof item === 'function') out.push('null')
      else linePieces(item, out)
    }
    out.push(']')
    return out
  }
  let first = true
  out.push('{')
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    const member = record[key]
    if (member === undefined || typeof member === 'function') continue
    out.push(`${first ? '' : ','}${JSON.stringify(key)}:`)
    first = false
    linePieces(member, out)
  }
  out.push('}')
  return out
}

/**
 * The UTF-8 size of `line` if it is over `maxEventBytes`, else `undefined`. Measures only when the
 * bounds (1 to 3 bytes per UTF-16 unit) do not decide.
 */
export function lineBytesOver(line: string, maxEventBytes: number): number | undefined {
  if (line.length * 3 <= maxEventBytes) return undefined
  const size = Buffer.byteLength(line, 'utf8')
  return size > maxEventBytes ? size : undefined
}

/**
 * Encodes `events` from index `from` as one write slice: every event's JSON on its own line, each
 * ending in `\n`, stopping after the line that brings the slice to `SLICE_UNITS` of text, at the
 * end, or before an event that `needsPieces` (`large` is then true and `next` is that event's
 * index). `check` sees each event's line first and throws to refuse it. Returns the bytes (possibly
 * empty) and the index of the first event not encoded.
 */
export function encodeSlice(
  events: readonly SessionEvent[],
  from: number,
  check: (event: SessionEvent, line: string) => void,
): { readonly data: Buffer; readonly next: number; readonly large: boolean } {
  let text = ''
  let next = from
  while (next < events.length && text.length < SLICE_UNITS) {
    const event = events[next] as SessionEvent
    if (needsPieces(event)) return { data: Buffer.from(text, 'utf8'), next, large: true }
    const line = JSON.stringify(event)
    check(event, line)
    text += `${line}\n`
    next++
  }
  return { data: Buffer.from(text, 'utf8'), next, large: false }
}

/**
 * Encodes a batch as write slices, checking every event's serialized size against `maxEventBytes`
 * before anything is returned (`EVENT_TOO_LARGE` naming `sessionId`). A batch of one slice without a
 * long string costs no await; anything larger yields to the event loop after every `SLICE_UNITS` of
 * text, an event with a long string included (its JSON is produced in pieces), so encoding never
 * holds the loop for more than about one slice.
 */
export function encodeBatch(
  sessionId: string,
  events: readonly SessionEvent[],
  maxEventBytes: number,
): Buffer[] | Promise<Buffer[]> {
  const check = (event: SessionEvent, line: string) => {
    const size = lineBytesOver(line, maxEventBytes)
    if (size !== undefined) throw eventTooLarge(event, size, maxEventBytes, sessionId)
  }
  const first = encodeSlice(events, 0, check)
  if (first.next === events.length) return [first.data]
  return (async () => {
    const slices: Buffer[] = []
    let slice = first
    for (;;) {
      if (slice.data.length > 0) slices.push(slice.data)
      if (slice.next === events.length) return slices
      await nextTurn()
      if (!slice.large) {
        slice = encodeSlice(events, slice.next, check)
        continue
      }
      const event = events[slice.next] as SessionEvent
      for (const data of await encodeLargeLine(event, sessionId, maxEventBytes)) slices.push(data)
      slice = { data: EMPTY, next: slice.next + 1, large: false }
    }
  })()
}

const EMPTY = Buffer.alloc(0)
