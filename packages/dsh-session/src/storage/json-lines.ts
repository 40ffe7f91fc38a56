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
