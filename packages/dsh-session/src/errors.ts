import { HarnessError } from 'dsh-llm'

/** Stable error codes of the session layer. Route on these, never on message text. */
export const SessionErrorCode = {
  /** Data is not plain JSON (BigInt, function, cycle, NaN, -0, undefined member, class instance). */
  NOT_JSON: 'NOT_JSON',
  /** A payload or envelope failed its schema. */
  INVALID_EVENT: 'INVALID_EVENT',
  /** An event type with no registered definition. */
  UNKNOWN_EVENT_TYPE: 'UNKNOWN_EVENT_TYPE',
  /** An execution event outside an open turn, a turn opened twice, or a misnumbered turn/step. */
  ENCLOSURE: 'ENCLOSURE',
  /** `append` called from inside another append's notification. */
  REENTRANT_APPEND: 'REENTRANT_APPEND',
  /** Surface metadata that does not fit the current surface. */
  INVALID_SURFACE: 'INVALID_SURFACE',
  /** An inbox splice with bad coordinates or a duplicate message id. */
  INVALID_SPLICE: 'INVALID_SPLICE',
  /** Fork at a boundary inside an open turn or outside the log. */
  INVALID_FORK: 'INVALID_FORK',
  /** A stored log with a defect before its last committed turn. */
  CORRUPT_LOG: 'CORRUPT_LOG',
  /** A stored log written by a newer format version. */
  UNSUPPORTED_VERSION: 'UNSUPPORTED_VERSION',
  /** Another writer holds the session's lease. */
  LOCKED: 'LOCKED',
  /** A batch whose first seq is not the backend's next seq. */
  SEQ_MISMATCH: 'SEQ_MISMATCH',
  /** No stored session with that id. */
  NOT_FOUND: 'NOT_FOUND',
  /** A session id that already exists. */
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  /** The backend failed to write or read. */
  STORAGE: 'STORAGE',
  /**
   * An append failed at a point where the backend cannot tell whether the batch was stored (a
   * connection lost after the request left, a sync that failed after the write and could not be
   * undone). Retrying the same batch at the same seq is safe and settles it: a stored batch is
   * found and not written twice.
   */
  APPEND_OUTCOME_UNKNOWN: 'APPEND_OUTCOME_UNKNOWN',
  /** An event whose serialized size is over the limit (`maxEventBytes`); nothing was written. */
  EVENT_TOO_LARGE: 'EVENT_TOO_LARGE',
  /** The session's file was removed, renamed or replaced under its live writer; the writer stopped. */
  FILE_REPLACED: 'FILE_REPLACED',
  /** Another writer took over the session's lease (this holder was judged dead); this writer stopped. */
  LEASE_LOST: 'LEASE_LOST',
  /** A caller tried to change a read-only view of the log (`session.events`). */
  READ_ONLY: 'READ_ONLY',
  /** Closing or releasing a session failed (flush, sync, handle close or lease release); see `cause`. */
  CLOSE_FAILED: 'CLOSE_FAILED',
  /** The session was closed. */
  CLOSED: 'CLOSED',
  /** A projection key registered twice. */
  DUPLICATE_PROJECTION: 'DUPLICATE_PROJECTION',
  /** A projection key with no registered definition. */
  UNKNOWN_PROJECTION: 'UNKNOWN_PROJECTION',
  /** An event type defined twice with `defineSessionEvent`. */
  DUPLICATE_EVENT_TYPE: 'DUPLICATE_EVENT_TYPE',
  /** A repair closer key registered twice with `registerRepairCloser`. */
  DUPLICATE_REPAIR_CLOSER: 'DUPLICATE_REPAIR_CLOSER',
  /** A `defineSessionEvent` declaration the catalog cannot honour (e.g. a package surface type). */
  INVALID_DEFINITION: 'INVALID_DEFINITION',
} as const

/** One of the session layer's error codes. */
export type SessionErrorCode = (typeof SessionErrorCode)[keyof typeof SessionErrorCode]

/** Where a session error happened: any of these that are known. */
export interface SessionErrorWhere {
  readonly sessionId?: string
  readonly eventType?: string
  readonly seq?: number
  readonly file?: string
  readonly line?: number
  /** A path into the event, such as `data.message.content[2]`. */
  readonly path?: string
}

/** An error of the session layer. `where` says what and where; the message says it for people. */
export class SessionError extends HarnessError {
  readonly where: SessionErrorWhere
  constructor(
    code: SessionErrorCode,
    message: string,
    where: SessionErrorWhere = {},
    options?: { cause?: unknown },
  ) {
    super(code, message, options)
    this.name = 'SessionError'
    this.where = where
  }
}
