/** Turning stored rows back into checked, frozen events and headers. */
import { SessionId } from 'dsh-llm'
import {
  SESSION_FORMAT_VERSION,
  SessionError,
  SessionErrorCode,
  type SessionEvent,
  type SessionFileHeader,
  validateEvent,
} from 'dsh-session'

/** A `dsh_sessions` row as selected by this package. */
export interface SessionRow {
  readonly id: string
  readonly format_version: number
  readonly created_at: string
  readonly parent_id: string | null
  readonly parent_seed_length: number | null
}

/** The columns every header query selects, in `SessionRow` shape. */
export const HEADER_COLUMNS =
  'id, format_version, created_at::text AS created_at, parent_id, parent_seed_length'

/** The header of a stored session. Throws `UNSUPPORTED_VERSION` for a newer format version. */
export function headerOf(row: SessionRow): SessionFileHeader {
  if (row.format_version > SESSION_FORMAT_VERSION) {
    throw new SessionError(
      SessionErrorCode.UNSUPPORTED_VERSION,
      `session ${row.id}: stored with format version ${row.format_version}, newer than this code's ${SESSION_FORMAT_VERSION}`,
      { sessionId: row.id },
    )
  }
  const header = {
    format: 'dsh-session' as const,
    version: row.format_version,
    sessionId: SessionId(row.id),
    createdAt: Number(row.created_at),
  }
  if (row.parent_id === null) return Object.freeze(header)
  const parent = Object.freeze({
    sessionId: SessionId(row.parent_id),
    seedLength: row.parent_seed_length ?? 0,
  })
  return Object.freeze({ ...header, parent })
}

/**
 * Checks one stored event body against the event catalog and its expected seq. Throws
 * `UNKNOWN_EVENT_TYPE` or `CORRUPT_LOG` naming the session and seq.
 */
export function decodeEvent(sessionId: string, body: unknown, expectedSeq: number): SessionEvent {
  let event: SessionEvent
  try {
    event = validateEvent(body)
  } catch (error) {
    if (error instanceof SessionError && error.code === SessionErrorCode.UNKNOWN_EVENT_TYPE) {
      throw new SessionError(
        SessionErrorCode.UNKNOWN_EVENT_TYPE,
        `session ${sessionId} seq ${expectedSeq}: ${error.message}`,
        { ...error.where, sessionId, seq: expectedSeq },
        { cause: error },
      )
    }
    const why = error instanceof Error ? error.message : String(error)
    throw new SessionError(
      SessionErrorCode.CORRUPT_LOG,
      `session ${sessionId} seq ${expectedSeq}: stored event is invalid: ${why}`,
      { sessionId, seq: expectedSeq },
      { cause: error },
    )
  }
  if (event.seq !== expectedSeq) {
    throw new SessionError(
      SessionErrorCode.CORRUPT_LOG,
      `session ${sessionId}: stored event at seq ${expectedSeq} carries seq ${event.seq}`,
      { sessionId, seq: expectedSeq, eventType: event.type },
    )
  }
  return event
}
