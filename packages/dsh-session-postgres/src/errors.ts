import { HarnessError } from 'dsh-llm'
import { errorChain, SessionError, SessionErrorCode } from 'dsh-session'

/** Stable error codes of the PostgreSQL backend and its mailbox. Route on these, never on message text. */
export const PgSessionErrorCode = {
  /** The database schema is missing or older than this code needs: run `migrate` first. */
  SCHEMA_OUT_OF_DATE: 'SCHEMA_OUT_OF_DATE',
  /** The database schema is newer than this code understands. */
  SCHEMA_TOO_NEW: 'SCHEMA_TOO_NEW',
  /** A mailbox message was already delivered (or is unknown) when its delivery was to be recorded. */
  DELIVERY_CONFLICT: 'DELIVERY_CONFLICT',
  /** A send or inject was refused before it was accepted (no such session, invalid message). */
  SEND_REFUSED: 'SEND_REFUSED',
} as const

/** One of the PostgreSQL backend's error codes. */
export type PgSessionErrorCode = (typeof PgSessionErrorCode)[keyof typeof PgSessionErrorCode]

/** Where a PostgreSQL backend error happened, as far as known. */
export interface PgSessionErrorWhere {
  readonly sessionId?: string
  readonly seq?: number
  readonly messageId?: string
}

/** An error of the PostgreSQL backend or its mailbox; `where` names the session, seq or message. */
export class PgSessionError extends HarnessError {
  readonly where: PgSessionErrorWhere
  constructor(
    code: PgSessionErrorCode,
    message: string,
    where: PgSessionErrorWhere = {},
    options?: { cause?: unknown },
  ) {
    super(code, message, options)
    this.name = 'PgSessionError'
    this.where = where
  }
}

/**
 * A writer's lease was taken over: `SessionError` `LEASE_LOST` (the seam's code for a deposed
 * holder), naming the session and, for a refused append, the seq. `why` finishes the sentence.
 */
export function leaseLost(sessionId: string, why: string, seq?: number): SessionError {
  return new SessionError(
    SessionErrorCode.LEASE_LOST,
    `session ${sessionId}: ${why}`,
    seq === undefined ? { sessionId } : { sessionId, seq },
  )
}

/** Whether `error` (or any error in its `errorChain`: causes and aggregated errors) is a `LEASE_LOST` refusal. */
export function isLeaseLost(error: unknown): boolean {
  for (const found of errorChain(error)) {
    if (found instanceof SessionError && found.code === SessionErrorCode.LEASE_LOST) return true
  }
  return false
}
