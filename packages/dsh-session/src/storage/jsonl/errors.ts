/** The errors the JSONL storage raises, each naming the session and its file. */
import { SessionError, SessionErrorCode } from '../../errors.ts'

/** A `STORAGE` error wrapping a file-system failure. */
export function storageError(message: string, where: SessionError['where'], cause: unknown): SessionError {
  return new SessionError(SessionErrorCode.STORAGE, message, where, { cause })
}

/** A `SEQ_MISMATCH` error naming the session, its file and the expected seq. */
export function seqMismatch(sessionId: string, file: string, why: string, seq: number): SessionError {
  return new SessionError(SessionErrorCode.SEQ_MISMATCH, `session ${sessionId} (${file}): ${why}`, {
    sessionId,
    file,
    seq,
  })
}

/** A `NOT_FOUND` error naming the session and the file looked for. */
export function notFound(sessionId: string, file: string): SessionError {
  return new SessionError(SessionErrorCode.NOT_FOUND, `session ${sessionId} not found (${file})`, {
    sessionId,
    file,
  })
}

/** An `ALREADY_EXISTS` error naming the session and its file. */
export function alreadyExists(sessionId: string, file: string): SessionError {
  return new SessionError(SessionErrorCode.ALREADY_EXISTS, `session ${sessionId} already exists (${file})`, {
    sessionId,
    file,
  })
}

/** A `LOCKED` error for a lease this storage instance already holds. */
export function heldHere(sessionId: string, file: string): SessionError {
  return new SessionError(
    SessionErrorCode.LOCKED,
    `session ${sessionId} (${file}) is locked: this storage already holds its lease`,
    { sessionId, file },
  )
}
