import { HarnessError } from 'dsh-llm'

/** Stable error codes of dsh-compaction. Route on these, never on message text. */
export const CompactionErrorCode = {
  /** A compaction of the session is already running in this process. */
  COMPACTION_IN_PROGRESS: 'COMPACTION_IN_PROGRESS',
  /** The log holds a `compaction/start` without its `compaction/end` (a lock left by another writer). */
  COMPACTION_OPEN: 'COMPACTION_OPEN',
  /** Options given to the plugin or to a compaction are invalid. */
  INVALID_OPTIONS: 'INVALID_OPTIONS',
  /** A summary is needed but the log has no `request/header` and no summarizer model was given. */
  NO_REQUEST_HEADER: 'NO_REQUEST_HEADER',
} as const

/** One of dsh-compaction's error codes. */
export type CompactionErrorCode = (typeof CompactionErrorCode)[keyof typeof CompactionErrorCode]

/** A compaction that could not start, or bad options. `code` is a `CompactionErrorCode`. */
export class CompactionError extends HarnessError {
  constructor(code: CompactionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options)
    this.name = 'CompactionError'
  }
}
