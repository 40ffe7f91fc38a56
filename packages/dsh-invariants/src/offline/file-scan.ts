/**
 * Reads a recorded JSONL session file as a stream of events, in fixed-size chunks, never holding more
 * than one chunk and one line: the reader behind the offline checks of files too large to load.
 */
import { open } from 'node:fs/promises'
import { type SessionEvent, SessionFileDecoder, type SessionFileHeader } from 'dsh-session'
import { unreadable } from './recorded-log.ts'

/**
 * Bytes per read. The events of one read are alive until the visitor has seen them; the fewer they
 * are, the fewer a scavenge finds alive and the less the young generation grows. Checking a
 * 1,000,000-event file on Node 24, 1 MiB reads peaked at 232–235 MB RSS on an idle machine and at
 * 305–330 MB on a loaded one; 64 KiB reads at 178–181 MB on both, in the same time. 32 KiB and less
 * cost more time in reads.
 */
const READ_BYTES = 64 * 1024

/** Options of `scanRecordedLog`. */
export interface ScanOptions {
  /** Called after each chunk read with the bytes read so far and the file's size. */
  readonly onProgress?: (bytesRead: number, totalBytes: number) => void
  /** Bytes per read (default 64 KiB, `READ_BYTES`). */
  readonly chunkSize?: number
}

/** What a scan found besides the events it handed on. */
export interface ScannedLog {
  readonly file: string
  readonly header: SessionFileHeader
  /** Events handed to the visitor. Event `i` stood on line `i + 2`. */
  readonly events: number
  /** The final line, when it was torn (no newline, or not JSON): a storage load would cut it off. */
  readonly tornLine?: number
}

/**
 * Reads `file` without modifying it, calling `onHeader` with the header line and `onEvent` with each
 * event in order (`index` from 0, and the file line it stood on: a run line stands for several), exactly as `readRecordedLog` would decode them (the same
 * `SessionFileDecoder`) — but one chunk at a time, so memory does not grow with the file. The final
 * line is skipped as torn when it lacks its newline or is not JSON. Rejects with `SessionError`:
 * `STORAGE` when the file cannot be opened or read, `UNSUPPORTED_VERSION` for a newer format,
 * `CORRUPT_LOG` naming the line for a bad header, a middle line that is not JSON, or an invalid event.
 * A visitor's own error rejects the scan as is.
 */
export async function scanRecordedLog(
  file: string,
  visitor: {
    readonly onHeader?: (header: SessionFileHeader) => void
    readonly onEvent: (event: SessionEvent, index: number, line: number) => void
    /**
     * Called once the events of one read have been visited, and awaited before the next read: a
     * visitor that writes what it derives to a stream waits here for the stream to drain, so a slow
     * reader of its output holds the scan back instead of the output piling up in memory.
     */
    readonly afterRead?: () => void | Promise<void>
  },
  options: ScanOptions = {},
): Promise<ScannedLog> {
  const handle = await open(file, 'r').catch((cause: unknown) => {
    throw unreadable(file, cause)
  })
  try {
    const size = (await handle.stat()).size
    const buffer = Buffer.allocUnsafe(options.chunkSize ?? READ_BYTES)
    const decoder = new SessionFileDecoder(file, { mode: 'recorded' })
    const events: SessionEvent[] = []
    const lines: number[] = []
    let header: SessionFileHeader | undefined
    let index = 0
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
      decoder.push(buffer.subarray(0, bytes), events, lines)
      if (header === undefined && decoder.state.header !== undefined) {
        header = decoder.state.header
        visitor.onHeader?.(header)
      }
      for (let i = 0; i < events.length; i++)
        visitor.onEvent(events[i] as SessionEvent, index++, lines[i] as number)
      // Dropped before the next read: a scavenge while it is awaited would find them alive.
      events.length = 0
      lines.length = 0
      options.onProgress?.(read, size)
      await visitor.afterRead?.()
    }
    const { torn } = decoder.end()
    return Object.freeze({
      file,
      header: decoder.state.header as SessionFileHeader,
      events: index,
      ...(torn === undefined ? {} : { tornLine: torn.line }),
    })
  } finally {
    await handle.close().catch(() => undefined)
  }
}
