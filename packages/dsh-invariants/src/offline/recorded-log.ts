/**
 * A read-only reader of recorded JSONL session files, for the offline checks. Unlike a storage load it
 * never writes (no torn-tail truncation, no repair, no lock) and leaves seq order to the log grammar,
 * so a log with a gap is reported as a violation rather than refused.
 */
import { readFileSync } from 'node:fs'
import {
  decodeSessionFileHeader,
  expandRunLine,
  isRunLine,
  SessionError,
  type SessionEvent,
  type SessionFileHeader,
  validateEvent,
} from 'dsh-session'

/** A recorded session file, read. Event `i` stood on line `lines[i]`. */
export interface RecordedLog {
  readonly file: string
  readonly header: SessionFileHeader
  readonly events: readonly SessionEvent[]
  /** The 1-based file line of each event (a run line stands for several events). */
  readonly lines: readonly number[]
  /** The final line, when it was torn (no newline, or not JSON): a storage load would cut it off. */
  readonly tornLine?: number
}

/**
 * The 1-based file line of the event at `index` of a file with one event per line (format version
 * 1, or no run lines); `RecordedLog.lines` holds the lines of any file.
 */
export function eventLine(index: number): number {
  return index + 2
}

/** A `CORRUPT_LOG` error naming `file:line`. */
export function corrupt(file: string, line: number, why: string, cause?: unknown): SessionError {
  return new SessionError(
    'CORRUPT_LOG',
    `${file}:${line}: ${why}`,
    { file, line },
    cause === undefined ? undefined : { cause },
  )
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Decodes and checks the header line (line 1) of `file`: dsh-session's own header reader (the one
 * `JsonlStorage` uses), accepting any session id. Throws `CORRUPT_LOG` or `UNSUPPORTED_VERSION`.
 */
export function decodeHeader(text: string, file: string): SessionFileHeader {
  return decodeSessionFileHeader(text, file)
}

/**
 * Validates one event line: the core schemas through `validateEvent`; an event type no loaded package
 * defined (a plugin's) is accepted on its envelope alone, since this reader cannot know its payload.
 */
export function decodeEvent(value: unknown, file: string, line: number): SessionEvent {
  try {
    return validateEvent(value)
  } catch (cause) {
    if (cause instanceof SessionError && cause.code === 'UNKNOWN_EVENT_TYPE' && isRecord(value)) {
      if (typeof value.seq === 'number' && typeof value.time === 'number' && 'data' in value) {
        return Object.freeze(value) as unknown as SessionEvent
      }
    }
    const why = cause instanceof Error ? cause.message : String(cause)
    throw corrupt(file, line, `invalid event: ${why}`, cause)
  }
}

/**
 * The events of one parsed line of `file`: the event, or the `assistant/chunk` events a run line
 * stands for, each checked as `decodeEvent` does. `CORRUPT_LOG` naming the line for a malformed run
 * line.
 */
export function decodeLine(value: unknown, file: string, line: number): SessionEvent[] {
  if (!isRunLine(value)) return [decodeEvent(value, file, line)]
  const expanded = expandRunLine(value)
  if (typeof expanded === 'string') throw corrupt(file, line, `invalid run line: ${expanded}`)
  return expanded.map((event) => decodeEvent(event, file, line))
}

/**
 * Reads `file` without modifying it: a header line, then one event (or one run of chunks) per line. The final line is
 * skipped as torn when it lacks its newline or is not JSON (as a storage load would cut it off). Throws
 * `SessionError`: `STORAGE` when the file cannot be read, `UNSUPPORTED_VERSION` for a newer format,
 * `CORRUPT_LOG` naming the line for a bad header, a middle line that is not JSON, or an invalid event.
 */
export function readRecordedLog(file: string): RecordedLog {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause)
    throw new SessionError('STORAGE', `${file}: cannot read: ${why}`, { file }, { cause })
  }
  const lines = text.split('\n')
  const terminated = lines[lines.length - 1] === ''
  if (terminated) lines.pop()
  const first = lines[0]
  if (first === undefined || (lines.length === 1 && !terminated)) {
    throw corrupt(
      file,
      1,
      first === undefined ? 'the file has no header line' : 'the header line is incomplete',
    )
  }
  const header = decodeHeader(first, file)
  const events: SessionEvent[] = []
  const eventLines: number[] = []
  let tornLine: number | undefined
  for (let i = 1; i < lines.length; i++) {
    const line = i + 1
    const last = i === lines.length - 1
    const body = lines[i] ?? ''
    if (last && !terminated) {
      tornLine = line
      break
    }
    let value: unknown
    try {
      value = JSON.parse(body)
    } catch (cause) {
      if (last) {
        tornLine = line
        break
      }
      throw corrupt(file, line, 'the line is not valid JSON', cause)
    }
    for (const event of decodeLine(value, file, line)) {
      events.push(event)
      eventLines.push(line)
    }
  }
  return Object.freeze({
    file,
    header,
    events: Object.freeze(events),
    lines: Object.freeze(eventLines),
    ...(tornLine === undefined ? {} : { tornLine }),
  })
}
