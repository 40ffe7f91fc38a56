import { HarnessError } from 'dsh-llm'

/** Stable error codes of the PostgreSQL backend and the fleet. Route on these, never on message text. */
export const PgSessionErrorCode = {
  /**
   * This host's write lease of a session was taken over (its fencing token is stale): the append was
   * refused by the database, and this host must stop writing the session.
   */
  FENCED: 'FENCED',
  /** The database schema is missing or older than this code needs: run `migrate` first. */
  SCHEMA_OUT_OF_DATE: 'SCHEMA_OUT_OF_DATE',
  /** The database schema is newer than this code understands. */
  SCHEMA_TOO_NEW: 'SCHEMA_TOO_NEW',
  /** A mailbox message was already delivered (or is unknown) when its delivery was to be recorded. */
  DELIVERY_CONFLICT: 'DELIVERY_CONFLICT',
  /** A send or inject was refused before it was accepted (no such session, invalid message). */
  SEND_REFUSED: 'SEND_REFUSED',
  /** The fleet host was stopped; no more work is taken. */
  HOST_STOPPED: 'HOST_STOPPED',
} as const

/** One of the PostgreSQL backend's error codes. */
export type PgSessionErrorCode = (typeof PgSessionErrorCode)[keyof typeof PgSessionErrorCode]

/** Where a PostgreSQL backend error happened, as far as known. */
export interface PgSessionErrorWhere {
  readonly sessionId?: string
  readonly seq?: number
  readonly messageId?: string
  /** The fencing token the refused writer presented. */
  readonly token?: string
}

/** An error of the PostgreSQL backend or the fleet; `where` names the session, seq or message. */
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

/** Whether `error` (or any error in its `cause` chain) is a `FENCED` refusal. */
export function isFenced(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof PgSessionError && current.code === PgSessionErrorCode.FENCED) return true
  }
  return false
}
