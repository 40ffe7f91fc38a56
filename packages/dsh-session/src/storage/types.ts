/**
 * The storage seam: what a backend (memory, JSONL, PostgreSQL, ...) implements under `Sessions`.
 * Types only; `dsh-session/testing` holds the executable contract every backend must pass.
 */
import type { SessionId } from 'dsh-llm'
import type { LoadReport, SessionEvent, SessionFileHeader } from '../types.ts'

/** A loaded session's raw material. */
export interface LoadedLog {
  readonly header: SessionFileHeader
  readonly events: readonly SessionEvent[]
  readonly report: LoadReport
}

/**
 * The storage seam. JSONL and in-memory backends ship; SQLite or PostgreSQL can implement the same.
 * All writes for one session come from one writer, which holds the session's lease.
 */
export interface SessionStorage {
  /** Creates a session atomically (never half a header) and takes its write lease. */
  create(header: SessionFileHeader): Promise<void>
  /** Takes the write lease of an existing session; refuses if another writer holds it. */
  acquire(sessionId: SessionId): Promise<void>
  /** Durably appends a batch whose first event has seq `expectedSeq`; refuses a seq mismatch. */
  appendBatch(sessionId: SessionId, events: readonly SessionEvent[], expectedSeq: number): Promise<void>
  /** Reads and validates a whole session; mends a torn tail (see `LoadReport`). */
  load(sessionId: SessionId): Promise<LoadedLog>
  /** Reads events from `fromSeq` on. */
  read(sessionId: SessionId, fromSeq: number): AsyncIterable<SessionEvent>
  /** Every stored session's header. */
  list(): Promise<readonly SessionFileHeader[]>
  /** Releases the write lease (and any open handle) of a session. */
  release(sessionId: SessionId): Promise<void>
}
