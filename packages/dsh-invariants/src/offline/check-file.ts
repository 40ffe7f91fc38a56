/** The offline check of one recorded session file, streamed: the library call behind the CLI. */
import type { SessionFileHeader } from 'dsh-session'
import type { Violation } from '../types.ts'
import { type ScanOptions, scanRecordedLog } from './file-scan.ts'
import { type LogCheckCounts, SessionLogChecker } from './log-checker.ts'

/** A violation found in a file: the `Violation` plus the line it stands on and the event type there. */
export interface FileViolation extends Violation {
  /** The 1-based file line of the offending event. */
  readonly line: number
  /** The offending event's type. */
  readonly eventType: string
}

/** The result of checking one file. */
export interface FileCheck extends LogCheckCounts {
  readonly file: string
  readonly sessionId: string
  readonly violations: readonly FileViolation[]
  /** The final line, when it was torn (skipped, as a storage load would cut it off). */
  readonly tornLine?: number
}

/**
 * Checks the recorded session `file` in one streaming pass (`scanRecordedLog` feeding a
 * `SessionLogChecker`): memory stays bounded by the longest line and the log's live state (open turn,
 * open model call, folded history), not by its number of events or requests. The fork provenance in
 * the file header pins where `session/end-seed` may stand. Rejects as `scanRecordedLog` does for a file
 * that cannot be read or decoded; a log that breaks the rules resolves with its violations.
 */
export async function checkSessionFile(file: string, options: ScanOptions = {}): Promise<FileCheck> {
  let checker = new SessionLogChecker()
  let header: SessionFileHeader | undefined
  const violations: FileViolation[] = []
  const scanned = await scanRecordedLog(
    file,
    {
      onHeader: (read) => {
        header = read
        checker = new SessionLogChecker({ parent: read.parent ?? null })
      },
      onEvent: (event, _index, line) => {
        for (const violation of checker.push(event)) {
          violations.push(Object.freeze({ ...violation, line, eventType: event.type }))
        }
      },
    },
    options,
  )
  return Object.freeze({
    file,
    sessionId: header?.sessionId ?? scanned.header.sessionId,
    ...checker.counts,
    violations: Object.freeze(violations),
    ...(scanned.tornLine === undefined ? {} : { tornLine: scanned.tornLine }),
  })
}
