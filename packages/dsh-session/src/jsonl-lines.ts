/**
 * A streaming line splitter over a file: reads fixed-size chunks, splits on `\n` at the byte level (so
 * every line knows its byte offset), and hands out the lines of each chunk as one array.
 */
import type { FileHandle } from 'node:fs/promises'

/** The read size. 64 KB keeps syscalls few without holding large buffers. */
export const CHUNK_BYTES = 64 * 1024

const NEWLINE = 0x0a

/** One line of a file, without its newline. */
export interface FileLine {
  /** The line's text, decoded as UTF-8. */
  readonly text: string
  /** 1-based line number. */
  readonly line: number
  /** Byte offset of the line's first byte. */
  readonly offset: number
  /** Length in bytes, newline included when `terminated`. */
  readonly bytes: number
  /** Whether a newline ends the line; only the file's last line can lack one. */
  readonly terminated: boolean
}

/**
 * Yields the lines of `handle` from byte 0, one array per chunk read (possibly empty). A final segment
 * without a newline is yielded with `terminated: false`; a file ending in `\n` yields no empty last line.
 */
export async function* readLines(handle: FileHandle, chunkBytes = CHUNK_BYTES): AsyncGenerator<FileLine[]> {
  const chunk = Buffer.allocUnsafe(chunkBytes)
  // A line spanning chunks is kept as pieces and joined once, when its newline arrives.
  let pending: Buffer[] = []
  let pendingBytes = 0
  let fileOffset = 0
  let lineNo = 0
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunkBytes, fileOffset)
    if (bytesRead === 0) break
    const lines: FileLine[] = []
    let start = 0
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start)
      if (nl === -1 || nl >= bytesRead) break
      lineNo++
      let text: string
      if (pendingBytes === 0) {
        text = chunk.toString('utf8', start, nl)
      } else {
        pending.push(chunk.subarray(start, nl))
        text = Buffer.concat(pending).toString('utf8')
      }
      const bytes = pendingBytes + (nl - start) + 1
      lines.push({ text, line: lineNo, offset: fileOffset + start - pendingBytes, bytes, terminated: true })
      pending = []
      pendingBytes = 0
      start = nl + 1
    }
    if (start < bytesRead) {
      // Copy: `chunk` is reused by the next read.
      pending.push(Buffer.from(chunk.subarray(start, bytesRead)))
      pendingBytes += bytesRead - start
    }
    fileOffset += bytesRead
    yield lines
  }
  if (pendingBytes > 0) {
    lineNo++
    yield [
      {
        text: Buffer.concat(pending).toString('utf8'),
        line: lineNo,
        offset: fileOffset - pendingBytes,
        bytes: pendingBytes,
        terminated: false,
      },
    ]
  }
}
