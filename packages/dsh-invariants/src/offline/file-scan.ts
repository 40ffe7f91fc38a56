/**
 * Reads a recorded JSONL session file as a stream of events, in fixed-size chunks, never holding more
 * than one chunk and one line: the reader behind the offline checks of files too large to load.
 */
import { open } from 'node:fs/promises'
import { SessionError, type SessionEvent, type SessionFileHeader } from 'dsh-session'
import { corrupt, decodeHeader, decodeLine } from './recorded-log.ts'

/** Options of `scanRecordedLog`. */
export interface ScanOptions {
  /** Called after each chunk read with the bytes read so far and the file's size. */
  readonly onProgress?: (bytesRead: number, totalBytes: number) => void
  /** Bytes per read (default 1 MiB). */
  readonly chunkSize?: number
}

/** What a scan found besides the events it handed on. */
export interface ScannedLog {
  readonly file: string
  readonly header: SessionFileHeader
  /** Events handed to the visitor (with the line each stood on). */
  readonly events: number
  /** The final line, when it was torn (no newline, or not JSON): a storage load would cut it off. */
  readonly tornLine?: number
}

const NEWLINE = 0x0a

/**
 * Reads `file` without modifying it, calling `onHeader` with the header line and `onEvent` with each
 * event in order (`index` from 0, and the file line it stood on; a run line stands for several), exactly as `readRecordedLog` would decode them — but one chunk at a
 * time, so memory does not grow with the file. The final line is skipped as torn when it lacks its
 * newline or is not JSON. Rejects with `SessionError`: `STORAGE` when the file cannot be opened or
 * read, `UNSUPPORTED_VERSION` for a newer format, `CORRUPT_LOG` naming the line for a bad header, a
 * middle line that is not JSON, or an invalid event. A visitor's own error rejects the scan as is.
 */
export async function scanRecordedLog(
  file: string,
  visitor: {
    readonly onHeader?: (header: SessionFileHeader) => void
    readonly onEvent: (event: SessionEvent, index: number, line: number) => void
  },
  options: ScanOptions = {},
): Promise<ScannedLog> {
  const handle = await open(file, 'r').catch((cause: unknown) => {
    throw unreadable(file, cause)
  })
  try {
    const size = (await handle.stat()).size
    const buffer = Buffer.allocUnsafe(options.chunkSize ?? 1 << 20)
    const lines = new LineDecoder(file, visitor)
    let read = 0
    for (;;) {
      let bytes: number
      try {
        bytes = (await handle.read(buffer, 0, buffer.length, null)).bytesRead
      } catch (cause) {
        throw unreadable(file, cause)
      }
      if (bytes === 0) break
      read += bytes
      lines.feed(buffer.subarray(0, bytes))
      options.onProgress?.(read, size)
    }
    return lines.end()
  } finally {
    await handle.close().catch(() => undefined)
  }
}

function unreadable(file: string, cause: unknown): SessionError {
  const why = cause instanceof Error ? cause.message : String(cause)
  return new SessionError('STORAGE', `${file}: cannot read: ${why}`, { file }, { cause })
}

/** Splits chunks into lines and decodes them; a line cut by a chunk boundary is carried over. */
class LineDecoder {
  private carry: Buffer[] = []
  private line = 0
  private index = 0
  private header: SessionFileHeader | undefined
  /** A newline-terminated line that is not JSON: torn if it is the last line, corrupt otherwise. */
  private unparsed: { readonly line: number; readonly cause: unknown } | undefined

  constructor(
    private readonly file: string,
    private readonly visitor: {
      readonly onHeader?: (header: SessionFileHeader) => void
      readonly onEvent: (event: SessionEvent, index: number, line: number) => void
    },
  ) {}

  feed(chunk: Buffer): void {
    let start = 0
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start)
      if (newline < 0) break
      if (this.carry.length === 0) {
        this.take(chunk.toString('utf8', start, newline))
      } else {
        this.carry.push(chunk.subarray(start, newline))
        this.take(Buffer.concat(this.carry).toString('utf8'))
        this.carry = []
      }
      start = newline + 1
    }
    // The rest of the chunk is the start of a line; copy it, the buffer is reused for the next read.
    if (start < chunk.length) this.carry.push(Buffer.from(chunk.subarray(start)))
  }

  end(): ScannedLog {
    const tail = this.carry.length > 0 ? this.line + 1 : undefined
    if (this.header === undefined) {
      throw corrupt(
        this.file,
        1,
        tail === undefined ? 'the file has no header line' : 'the header line is incomplete',
      )
    }
    if (tail !== undefined && this.unparsed !== undefined) {
      throw corrupt(this.file, this.unparsed.line, 'the line is not valid JSON', this.unparsed.cause)
    }
    const tornLine = tail ?? this.unparsed?.line
    return Object.freeze({
      file: this.file,
      header: this.header,
      events: this.index,
      ...(tornLine === undefined ? {} : { tornLine }),
    })
  }

  private take(text: string): void {
    const line = ++this.line
    if (line === 1) {
      this.header = decodeHeader(text, this.file)
      this.visitor.onHeader?.(this.header)
      return
    }
    if (this.unparsed !== undefined) {
      throw corrupt(this.file, this.unparsed.line, 'the line is not valid JSON', this.unparsed.cause)
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (cause) {
      this.unparsed = { line, cause }
      return
    }
    for (const event of decodeLine(value, this.file, line)) this.visitor.onEvent(event, this.index++, line)
  }
}
