/** A one-line progress indicator for long files, drawn on a terminal's stderr only. */

const MIN_BYTES = 16 << 20
const INTERVAL_MS = 200

/** What the indicator writes to: a stream and whether it is a terminal. */
export interface ProgressSink {
  readonly isTTY?: boolean
  write(text: string): unknown
}

/**
 * Returns an `onProgress` callback for a file, or `undefined` when no indicator is drawn: `sink` is
 * not a terminal, or the file is under 16 MiB. Redraws at most every 200 ms; `clear()` erases the line.
 */
export function progressFor(
  file: string,
  sink: ProgressSink,
): { onProgress: (read: number, total: number) => void; clear: () => void } | undefined {
  if (sink.isTTY !== true) return undefined
  let last = 0
  let drawn = false
  return {
    onProgress: (read, total) => {
      if (total < MIN_BYTES) return
      const now = Date.now()
      if (now - last < INTERVAL_MS && read < total) return
      last = now
      drawn = true
      const percent = total === 0 ? 100 : Math.floor((read / total) * 100)
      sink.write(`\r\x1b[K${file}: ${percent}% (${mib(read)} of ${mib(total)} MiB)`)
    },
    clear: () => {
      if (drawn) sink.write('\r\x1b[K')
    },
  }
}

function mib(bytes: number): string {
  return (bytes / (1 << 20)).toFixed(0)
}
