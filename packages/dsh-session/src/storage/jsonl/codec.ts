/**
 * The JSONL session file format: a header line, then one event envelope per line, each line ending in
 * `\n`. Encoding and decoding of single lines; streaming lives in `scan.ts`.
 */
import { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import type { SessionEvent, SessionFileHeader, SessionParent } from '../../types.ts'
import { eventTooLarge } from '../event-size.ts'
import { hasLongString, jsonPieces, STRING_PIECE_UNITS } from './large-event.ts'

/** The JSONL format version this code writes and the newest it reads. */
export const SESSION_FORMAT_VERSION = 1

/** The `format` tag of every session file header. */
export const SESSION_FORMAT = 'dsh-session'

const NEWLINE = 0x0a

/** The header line's bytes, newline included. Absent `parent` is omitted. */
export function encodeHeader(header: SessionFileHeader): Buffer {
  const plain: Record<string, unknown> = {
    format: header.format,
    version: header.version,
    sessionId: header.sessionId,
    createdAt: header.createdAt,
  }
  if (header.parent !== undefined) {
    plain.parent = { sessionId: header.parent.sessionId, seedLength: header.parent.seedLength }
  }
  return Buffer.from(`${JSON.stringify(plain)}\n`, 'utf8')
}

/** Text (UTF-16 units) per write slice: encoding a batch yields to the event loop between slices. */
export const SLICE_UNITS = 1024 * 1024

/**
 * Encodes `events` from index `from` as one write slice: every event's JSON on its own line, each
 * ending in `\n`, stopping after the line that brings the slice to `SLICE_UNITS` of text, at the
 * end, or before an event holding a string over `STRING_PIECE_UNITS` (`large` is then true and
 * `next` is that event's index: it is encoded in pieces). `check` sees each event's line first and
 * throws to refuse it. Returns the bytes (possibly empty) and the index of the first event not
 * encoded.
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
    if (hasLongString(event.data, STRING_PIECE_UNITS)) {
      return { data: Buffer.from(text, 'utf8'), next, large: true }
    }
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
    // UTF-8 takes 1 to 3 bytes per UTF-16 unit: measure only when the bounds do not decide.
    if (line.length * 3 <= maxEventBytes) return
    const size = Buffer.byteLength(line, 'utf8')
    if (size > maxEventBytes) throw eventTooLarge(event, size, maxEventBytes, sessionId)
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
      for (const data of await encodeLargeEvent(event, sessionId, maxEventBytes)) slices.push(data)
      slice = { data: EMPTY, next: slice.next + 1, large: false }
    }
  })()
}

const EMPTY = Buffer.alloc(0)

function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve))
}

/**
 * One event's line (newline included) as buffers of about `SLICE_UNITS` each, yielding between
 * them; `EVENT_TOO_LARGE` once its bytes pass `maxEventBytes` (the size reported is the whole line's).
 */
async function encodeLargeEvent(
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

/** Whether `bytes` ends with a newline (an empty buffer does not). */
export function endsWithNewline(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE
}

/**
 * Parses and checks a header line of `file`. Throws `UNSUPPORTED_VERSION` for a version newer than
 * `SESSION_FORMAT_VERSION`, `CORRUPT_LOG` (line 1) for anything that is not a dsh-session header of
 * `expectedId`.
 */
export function decodeHeader(text: string, file: string, expectedId: string): SessionFileHeader {
  const corrupt = (why: string, cause?: unknown) =>
    new SessionError(
      SessionErrorCode.CORRUPT_LOG,
      `${file}:1: ${why}`,
      { file, line: 1, sessionId: expectedId },
      cause === undefined ? undefined : { cause },
    )
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw corrupt('the header line is not JSON', cause)
  }
  if (!isRecord(value) || value.format !== SESSION_FORMAT) throw corrupt('not a dsh-session file header')
  const { version, sessionId, createdAt, parent } = value
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw corrupt(`invalid format version ${JSON.stringify(version)}`)
  }
  if (version > SESSION_FORMAT_VERSION) {
    throw new SessionError(
      SessionErrorCode.UNSUPPORTED_VERSION,
      `${file}:1: format version ${version} is newer than this reader supports (${SESSION_FORMAT_VERSION})`,
      { file, line: 1, sessionId: expectedId },
    )
  }
  if (sessionId !== expectedId) {
    throw corrupt(`header names session ${JSON.stringify(sessionId)}, expected ${JSON.stringify(expectedId)}`)
  }
  if (typeof createdAt !== 'number' || !Number.isFinite(createdAt)) throw corrupt('invalid createdAt')
  const header: { -readonly [K in keyof SessionFileHeader]: SessionFileHeader[K] } = {
    format: SESSION_FORMAT,
    version,
    sessionId: SessionId(expectedId),
    createdAt,
  }
  if (parent !== undefined) header.parent = decodeParent(parent, corrupt)
  return header
}

function decodeParent(value: unknown, corrupt: (why: string) => SessionError): SessionParent {
  if (!isRecord(value)) throw corrupt('invalid parent')
  const { sessionId, seedLength } = value
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw corrupt('invalid parent.sessionId')
  if (typeof seedLength !== 'number' || !Number.isInteger(seedLength) || seedLength < 0) {
    throw corrupt('invalid parent.seedLength')
  }
  return { sessionId: SessionId(sessionId), seedLength }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
