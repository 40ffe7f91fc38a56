/**
 * A read-only reader of recorded JSONL session files, for the offline checks: dsh-session's
 * `SessionFileDecoder` in `recorded` mode over the whole file. Unlike a storage load it never writes
 * (no torn-tail truncation, no repair, no lock) and leaves seq order to the log grammar, so a log with
 * a gap is reported as a violation rather than refused.
 */
import { readFileSync } from 'node:fs'
import { SessionError, type SessionEvent, SessionFileDecoder, type SessionFileHeader } from 'dsh-session'

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

/** A `STORAGE` error for a file that cannot be opened or read. */
export function unreadable(file: string, cause: unknown): SessionError {
  const why = cause instanceof Error ? cause.message : String(cause)
  return new SessionError('STORAGE', `${file}: cannot read: ${why}`, { file }, { cause })
}

/**
 * Reads `file` without modifying it: a header line (any session id), then one event (or one run of
 * chunk events) per line; a
 * type no loaded package defines (a plugin's) is accepted on its envelope alone. The final line is
 * skipped as torn when it lacks its newline or is not JSON (as a storage load would cut it off).
 * Throws `SessionError`: `STORAGE` when the file cannot be read, `UNSUPPORTED_VERSION` for a newer
 * format, `CORRUPT_LOG` naming the line for a bad header, a middle line that is not JSON, or an
 * invalid event.
 */
export function readRecordedLog(file: string): RecordedLog {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (cause) {
    throw unreadable(file, cause)
  }
  const decoder = new SessionFileDecoder(file, { mode: 'recorded' })
  const lines: number[] = []
  const events = decoder.push(bytes, [], lines)
  const { header, torn } = decoder.end()
  return Object.freeze({
    file,
    header,
    events: Object.freeze(events),
    lines: Object.freeze(lines),
    ...(torn === undefined ? {} : { tornLine: torn.line }),
  })
}
