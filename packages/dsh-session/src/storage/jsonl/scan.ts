/**
 * Reads a JSONL session file front to back, applying the load rules: the header is checked first, every
 * event line must parse, validate and carry the next seq (a run line: each event it stands for); only
 * the file's final line may be torn.
 */
import type { FileHandle } from 'node:fs/promises'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import { checkEvent } from '../../schemas.ts'
import type { SessionEvent, SessionFileHeader } from '../../types.ts'
import { decodeHeader } from './codec.ts'
import { type FileLine, readLines } from './lines.ts'
import { expandRunLine, isRunLine } from './run-line.ts'

/** A torn final line: where it starts and how long it is. */
export interface TornLine {
  readonly line: number
  readonly offset: number
  readonly bytes: number
}

/** What a scan learned besides the events; filled in as the scan proceeds. */
export interface ScanState {
  header?: SessionFileHeader
  /** The seq the next event would get: one past the last complete valid event. */
  nextSeq: number
  /** The final line, when it lacks its newline or is not JSON. Never counted as an event. */
  torn?: TornLine
  /** Where the complete lines end: the byte offset of the torn line, or the file size without one. */
  end: number
}

/**
 * Yields the events of the session file open in `handle`, one array per chunk read, after checking the
 * header (which `state.header` then holds). Throws `UNSUPPORTED_VERSION` for a newer header,
 * `UNKNOWN_EVENT_TYPE` for an event type with no definition, and `CORRUPT_LOG` (naming file, line and
 * expected seq) for any other defect that is not the torn final line. Never writes.
 */
export async function* scanSession(
  handle: FileHandle,
  file: string,
  sessionId: string,
  state: ScanState,
): AsyncGenerator<SessionEvent[]> {
  // An unparsable complete line is torn only if nothing follows it; decide when the next line arrives.
  let suspect: { line: FileLine; cause: unknown } | undefined
  for await (const lines of readLines(handle)) {
    const events: SessionEvent[] = []
    for (const line of lines) {
      state.end = line.offset + line.bytes
      if (line.line === 1) {
        if (!line.terminated) throw corrupt(file, line.line, 'the header line is incomplete')
        state.header = decodeHeader(line.text, file, sessionId)
        continue
      }
      if (suspect !== undefined) {
        throw corruptEvent(
          file,
          suspect.line.line,
          state.nextSeq,
          'the line is not valid JSON',
          suspect.cause,
        )
      }
      if (!line.terminated) {
        state.torn = { line: line.line, offset: line.offset, bytes: line.bytes }
        state.end = line.offset
        continue
      }
      let value: unknown
      try {
        value = JSON.parse(line.text)
      } catch (cause) {
        suspect = { line, cause }
        continue
      }
      if (isRunLine(value)) {
        const expanded = expandRunLine(value)
        if (typeof expanded === 'string') throw corruptEvent(file, line.line, state.nextSeq, expanded)
        for (const event of expanded) {
          events.push(decodeEvent(event, file, line.line, state.nextSeq))
          state.nextSeq++
        }
        continue
      }
      events.push(decodeEvent(value, file, line.line, state.nextSeq))
      state.nextSeq++
    }
    if (events.length > 0) yield events
  }
  if (state.header === undefined) throw corrupt(file, 1, 'the file has no header line')
  if (suspect !== undefined) {
    state.torn = { line: suspect.line.line, offset: suspect.line.offset, bytes: suspect.line.bytes }
    state.end = suspect.line.offset
  }
}

function decodeEvent(value: unknown, file: string, line: number, expectedSeq: number): SessionEvent {
  const seq = typeof value === 'object' && value !== null ? (value as { seq?: unknown }).seq : undefined
  if (seq !== expectedSeq) {
    throw corruptEvent(file, line, expectedSeq, `found seq ${JSON.stringify(seq) ?? 'undefined'}`)
  }
  try {
    return freezeParsed(checkEvent(value))
  } catch (cause) {
    if (cause instanceof SessionError && cause.code === SessionErrorCode.UNKNOWN_EVENT_TYPE) {
      const type = String((value as { type?: unknown }).type)
      throw new SessionError(
        SessionErrorCode.UNKNOWN_EVENT_TYPE,
        `${file}:${line}: seq ${expectedSeq}: unknown event type "${type}"`,
        { file, line, seq: expectedSeq, eventType: type },
        { cause },
      )
    }
    const why = cause instanceof Error ? cause.message : String(cause)
    throw corruptEvent(file, line, expectedSeq, `invalid event: ${why}`, cause)
  }
}

/**
 * Deep-freezes a value fresh from `JSON.parse` in place (children first, so a frozen object never
 * has an unfrozen descendant). Such a value is a tree of plain objects and arrays nobody else holds,
 * so unlike `deepFreeze` this does not look for frozen subtrees to skip.
 */
function freezeParsed<T extends object>(value: T): T {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const member: unknown = value[i]
      if (typeof member === 'object' && member !== null) freezeParsed(member)
    }
  } else {
    const record = value as Record<string, unknown>
    for (const key in record) {
      const member = record[key]
      if (typeof member === 'object' && member !== null) freezeParsed(member)
    }
  }
  return Object.freeze(value)
}

function corruptEvent(
  file: string,
  line: number,
  expectedSeq: number,
  why: string,
  cause?: unknown,
): SessionError {
  return new SessionError(
    SessionErrorCode.CORRUPT_LOG,
    `${file}:${line}: corrupt log at expected seq ${expectedSeq}: ${why}`,
    { file, line, seq: expectedSeq },
    cause === undefined ? undefined : { cause },
  )
}

function corrupt(file: string, line: number, why: string): SessionError {
  return new SessionError(SessionErrorCode.CORRUPT_LOG, `${file}:${line}: ${why}`, { file, line })
}
