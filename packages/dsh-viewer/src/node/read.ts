/** Reads a session file into view data. */
import { readRecordedLog } from 'dsh-invariants'
import { buildViewData } from '../data/build.ts'
import type { ViewData } from '../data/types.ts'

/**
 * The view data of the JSONL session file at `file`, with `tornLine` set when its final line was torn
 * and skipped. Throws what `readRecordedLog` throws for an unreadable file.
 */
export function readViewData(file: string): ViewData {
  const log = readRecordedLog(file)
  return buildViewData({
    file,
    events: log.events,
    sessionId: log.header.sessionId,
    ...(log.tornLine === undefined ? {} : { tornLine: log.tornLine }),
  })
}
