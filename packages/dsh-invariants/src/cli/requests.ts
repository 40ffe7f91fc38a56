/**
 * `dsh-invariants requests <file>`: every request a recorded log implies, one JSON line each, written
 * at the pace its reader takes them.
 */
import { once } from 'node:events'
import { SessionId } from 'dsh-llm'
import { RequestDeriver } from '../derive/reconstruct.ts'
import { scanRecordedLog } from '../offline/file-scan.ts'

/** What printing the requests of a file found besides the requests. */
export interface PrintedRequests {
  readonly requests: number
  /** The final line, when it was torn and skipped (as a storage load would cut it off). */
  readonly tornLine?: number
}

/**
 * Writes every request `file` implies to `out`, one JSON line each, in order. The lines of one read
 * of the file go out together; when `out` reports itself full (`write` returned false), the next
 * read waits for its `drain`, so memory stays bounded however slowly `out` is read. Rejects as
 * `scanRecordedLog` does (after writing the requests before the bad line), or with `out`'s error.
 */
export async function printRequests(file: string, out: NodeJS.WritableStream): Promise<PrintedRequests> {
  let deriver = new RequestDeriver()
  let pending: string[] = []
  let requests = 0
  const flush = (): Promise<unknown> | undefined => {
    if (pending.length === 0) return undefined
    const text = `${pending.join('\n')}\n`
    pending = []
    return out.write(text) ? undefined : once(out, 'drain')
  }
  try {
    const { tornLine } = await scanRecordedLog(file, {
      onHeader: (header) => {
        deriver = new RequestDeriver(SessionId(header.sessionId))
      },
      onEvent: (event) => {
        const request = deriver.push(event)
        if (request === undefined) return
        pending.push(JSON.stringify(request))
        requests++
      },
      afterRead: async () => {
        await flush()
      },
    })
    await flush()
    return tornLine === undefined ? { requests } : { requests, tornLine }
  } catch (error) {
    flush()
    throw error
  }
}
