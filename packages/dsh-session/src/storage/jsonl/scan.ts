/**
 * The one reader of JSONL session files: the header line first, then one event per line (or, from
 * format version 2, one run line for several chunk events), only the file's final line allowed to be torn. `SessionFileDecoder` is I/O-free (bytes pushed in chunks), so
 * the storage's load, the invariants' streaming check and a whole-file read all decode alike.
 */
import type { FileHandle } from 'node:fs/promises'
import { isRecord } from 'dsh-llm'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import { checkEvent } from '../../schemas.ts'
import type { SessionEvent, SessionFileHeader } from '../../types.ts'
import { decodeHeader } from './codec.ts'
import { CHUNK_BYTES, type FileLine, LineSplitter } from './lines.ts'
import { expandRunLine, isRunLine } from './run-line.ts'

/** A torn final line: where it starts and how long it is. */
export interface TornLine {
  /** Its 1-based line number. */
  readonly line: number
  /** Byte offset of its first byte. */
  readonly offset: number
  /** Its length in bytes (with its newline, if it has one). */
  readonly bytes: number
}

/** What a read learned besides the events; filled in as the read proceeds. */
export interface ScanState {
  header?: SessionFileHeader
  /**
   * Events decoded so far: the seq the next event would get in `load` mode, where seqs are
   * contiguous from 0 (event `i` stood on line `i + 2`).
   */
  nextSeq: number
  /** The final line, when it lacks its newline or is not JSON. Never counted as an event. */
  torn?: TornLine
  /** Where the complete lines end: the byte offset of the torn line, or the file size without one. */
  end: number
}

/** How strictly a `SessionFileDecoder` reads. */
export interface SessionFileDecoderOptions {
  /** The session id the header must name; without it any non-empty id is accepted. */
  readonly sessionId?: string
  /**
   * `load` (the default; what a storage load accepts): every event carries the next seq and a
   * defined type. `recorded` (the offline checks): seq order is left to the log grammar, so a gap is
   * reported rather than refused, and a type no loaded package defines is accepted on its envelope
   * (`seq`, `time`, `data`) alone, shallow-frozen.
   */
  readonly mode?: 'load' | 'recorded'
}

/**
 * Decodes a JSONL session file from its bytes, pushed in order in chunks of any size. `push` returns
 * the events of the lines each chunk completes; `end` settles the final line. Throws `SessionError`:
 * `UNSUPPORTED_VERSION` for a newer header; `CORRUPT_LOG` naming file and line for a bad or missing
 * header, a complete line that is not JSON with more lines after it, or an invalid event (in `load`
 * mode also a seq other than the next, the message naming the expected seq); `UNKNOWN_EVENT_TYPE`
 * (`load` mode) for an event type with no definition.
 */
export class SessionFileDecoder {
  /** What the read learned so far; `header` is set once line 1 is decoded. */
  readonly state: ScanState = { nextSeq: 0, end: 0 }
  private readonly splitter = new LineSplitter()
  private readonly lines: FileLine[] = []
  /** While `push` runs: where to record each decoded event's line, if the caller asked. */
  private eventLines: number[] | undefined
  // An unparsable complete line is torn only if nothing follows it; decided when the next line arrives.
  private suspect: { readonly line: FileLine; readonly cause: unknown } | undefined

  constructor(
    /** The file's name, as errors name it. */
    readonly file: string,
    private readonly options: SessionFileDecoderOptions = {},
  ) {}

  /**
   * Decodes the lines `chunk` completes, appending their events to `out` (and returning it), and to
   * `eventLines`, when given, the file line each event stood on (a run line stands for several).
   */
  push(chunk: Buffer, out: SessionEvent[] = [], eventLines?: number[]): SessionEvent[] {
    const lines = this.lines
    lines.length = 0
    this.splitter.push(chunk, lines)
    this.eventLines = eventLines
    try {
      for (let i = 0; i < lines.length; i++) this.take(lines[i] as FileLine, out)
    } finally {
      this.eventLines = undefined
    }
    return out
  }

  /**
   * Ends the file: a final line without a newline, or a final complete line that is not JSON, is
   * recorded as `torn` (never an event). Returns the state with its header; throws `CORRUPT_LOG` when
   * the file has no complete header line.
   */
  end(): ScanState & { readonly header: SessionFileHeader } {
    const last = this.splitter.finish()
    if (last !== undefined) this.take(last, [])
    const { state, suspect } = this
    if (state.header === undefined) throw this.corrupt(1, 'the file has no header line')
    if (suspect !== undefined) {
      state.torn = { line: suspect.line.line, offset: suspect.line.offset, bytes: suspect.line.bytes }
      state.end = suspect.line.offset
      this.suspect = undefined
    }
    return state as ScanState & { readonly header: SessionFileHeader }
  }

  private take(line: FileLine, out: SessionEvent[]): void {
    const state = this.state
    state.end = line.offset + line.bytes
    if (line.line === 1) {
      if (!line.terminated) throw this.corrupt(1, 'the header line is incomplete')
      state.header = decodeHeader(line.text, this.file, this.options.sessionId)
      return
    }
    if (this.suspect !== undefined) {
      throw this.corruptLine(this.suspect.line.line, 'the line is not valid JSON', this.suspect.cause)
    }
    if (!line.terminated) {
      state.torn = { line: line.line, offset: line.offset, bytes: line.bytes }
      state.end = line.offset
      return
    }
    let value: unknown
    try {
      value = JSON.parse(line.text)
    } catch (cause) {
      this.suspect = { line, cause }
      return
    }
    this.decodeLine(value, line.line, out)
  }

  /**
   * The one decoder of a line: the parsed `value` of `line` becomes the events it holds — one for an
   * event line, each chunk of a run line (format version 2, `run-line.ts`) in order.
   */
  private decodeLine(value: unknown, line: number, out: SessionEvent[]): void {
    if (!isRunLine(value)) {
      this.decodeEvent(value, line, out)
      return
    }
    const expanded = expandRunLine(value)
    if (typeof expanded === 'string') throw this.corruptLine(line, `invalid run line: ${expanded}`)
    for (let i = 0; i < expanded.length; i++) this.decodeEvent(expanded[i], line, out)
  }

  /** One event of `line` (the line itself, or one chunk of its run), checked and frozen. */
  private decodeEvent(value: unknown, line: number, out: SessionEvent[]): void {
    const expectedSeq = this.state.nextSeq
    const recorded = this.options.mode === 'recorded'
    if (!recorded) {
      const seq = isRecord(value) ? value.seq : undefined
      if (seq !== expectedSeq) {
        throw this.corruptLine(line, `found seq ${JSON.stringify(seq) ?? 'undefined'}`)
      }
    }
    let event: SessionEvent
    try {
      event = freezeParsed(checkEvent(value))
    } catch (cause) {
      if (cause instanceof SessionError && cause.code === SessionErrorCode.UNKNOWN_EVENT_TYPE) {
        if (recorded) event = envelopeOnly(value, () => this.invalid(line, cause))
        else throw this.unknownType(value, line, cause)
      } else {
        throw this.invalid(line, cause)
      }
    }
    out.push(event)
    this.eventLines?.push(line)
    this.state.nextSeq = expectedSeq + 1
  }

  private invalid(line: number, cause: unknown): SessionError {
    const why = cause instanceof Error ? cause.message : String(cause)
    return this.corruptLine(line, `invalid event: ${why}`, cause)
  }

  private unknownType(value: unknown, line: number, cause: unknown): SessionError {
    const { file } = this
    const seq = this.state.nextSeq
    const type = String((value as { type?: unknown }).type)
    return new SessionError(
      SessionErrorCode.UNKNOWN_EVENT_TYPE,
      `${file}:${line}: seq ${seq}: unknown event type "${type}"`,
      { file, line, seq, eventType: type },
      { cause },
    )
  }

  /** A defect of an event line: in `load` mode naming the expected seq, in `recorded` mode the line alone. */
  private corruptLine(line: number, why: string, cause?: unknown): SessionError {
    if (this.options.mode === 'recorded') return this.corrupt(line, why, cause)
    const { file } = this
    const seq = this.state.nextSeq
    return new SessionError(
      SessionErrorCode.CORRUPT_LOG,
      `${file}:${line}: corrupt log at expected seq ${seq}: ${why}`,
      { file, line, seq },
      cause === undefined ? undefined : { cause },
    )
  }

  private corrupt(line: number, why: string, cause?: unknown): SessionError {
    const { file } = this
    return new SessionError(
      SessionErrorCode.CORRUPT_LOG,
      `${file}:${line}: ${why}`,
      { file, line },
      cause === undefined ? undefined : { cause },
    )
  }
}

/** An event of a type nobody defined, accepted on its envelope alone; else `invalid()` is thrown. */
function envelopeOnly(value: unknown, invalid: () => SessionError): SessionEvent {
  if (isRecord(value) && typeof value.seq === 'number' && typeof value.time === 'number' && 'data' in value) {
    return Object.freeze(value) as unknown as SessionEvent
  }
  throw invalid()
}

/**
 * Yields the events of the session file open in `handle`, one array per chunk read, after checking the
 * header (which `state.header` then holds): a `SessionFileDecoder` in `load` mode for `sessionId`,
 * throwing as it does. Never writes.
 */
export async function* scanSession(
  handle: FileHandle,
  file: string,
  sessionId: string,
  state: ScanState,
): AsyncGenerator<SessionEvent[]> {
  const decoder = new SessionFileDecoder(file, { sessionId })
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES)
  for (let offset = 0; ; ) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, offset)
    if (bytesRead === 0) break
    offset += bytesRead
    const events = decoder.push(chunk.subarray(0, bytesRead))
    Object.assign(state, decoder.state)
    if (events.length > 0) yield events
  }
  Object.assign(state, decoder.end())
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
