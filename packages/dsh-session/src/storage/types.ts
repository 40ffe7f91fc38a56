/**
 * The storage seam: what a backend (memory, JSONL, PostgreSQL, ...) implements under `Sessions`.
 * Types only; `dsh-session/testing` holds the executable contract every backend must pass.
 */
import type { SessionId } from 'dsh-llm'
import type { LoadReport, SessionEvent, SessionFileHeader, SessionListing } from '../types.ts'

/** A loaded session's raw material. */
export interface LoadedLog {
  readonly header: SessionFileHeader
  readonly events: readonly SessionEvent[]
  readonly report: LoadReport
}

/**
 * Consecutive events already encoded as lines of the JSONL format, in UTF-8, in seq order: each
 * line an event's `JSON.stringify`, or a run line standing for consecutive `assistant/chunk` events
 * of one run (format version 2), followed by `\n`. `chunks` concatenated are exactly those lines; a
 * chunk may end inside a line. The bytes belong to the caller, which reuses their memory once the
 * append settles.
 */
export interface EncodedLines {
  /** How many events the lines stand for (a run line counts each of its chunk entries). */
  readonly count: number
  readonly chunks: readonly Uint8Array[]
}

/** The default per-event size limit: 16 MiB of serialized JSON. */
export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024

/**
 * The storage seam. JSONL and in-memory backends ship; SQLite or PostgreSQL can implement the same,
 * and `describeStorageContract` from `dsh-session/testing` checks that they do.
 *
 * Leases: all writes for one session come from one holder of its write lease. A lease is taken by
 * `create` or `acquire` and given back by `release` or `close`; taking a lease some holder (this
 * instance included) already has fails with `LOCKED`, unless the backend can tell the holder is dead,
 * in which case it takes the lease over and the deposed holder's later writes fail with `LEASE_LOST`.
 */
export interface SessionStorage {
  /**
   * The largest serialized event (UTF-8 bytes of its JSON line) this backend stores; `appendBatch`
   * refuses a batch holding a larger one with `EVENT_TOO_LARGE` and writes nothing. `Sessions` reads
   * it to refuse such an append before it commits. Absent means `DEFAULT_MAX_EVENT_BYTES`.
   */
  readonly maxEventBytes?: number
  /** Creates a session atomically (never half a header) and takes its write lease. */
  create(header: SessionFileHeader): Promise<void>
  /** Takes the write lease of an existing session; `LOCKED` if a live holder (this instance too) has it. */
  acquire(sessionId: SessionId): Promise<void>
  /**
   * Durably appends a batch whose first event has seq `expectedSeq`. Refuses (writing nothing) what
   * its own `load` would refuse, with the event catalog's error (`checkBatch`: `UNKNOWN_EVENT_TYPE`,
   * `INVALID_EVENT`); `SEQ_MISMATCH` for a seq that is not the next one or other events stored at
   * those seqs, `EVENT_TOO_LARGE` (nothing written), `LOCKED` without the lease, `LEASE_LOST` after a
   * takeover. Retrying a batch is always safe: a batch (or a leading part of it) already stored from
   * `expectedSeq` on — an earlier attempt that landed — resolves without being written twice. A
   * batch that rejects is all or nothing, except `APPEND_OUTCOME_UNKNOWN`: the backend cannot tell
   * whether it was stored, and retrying the same batch settles it.
   */
  appendBatch(sessionId: SessionId, events: readonly SessionEvent[], expectedSeq: number): Promise<void>
  /**
   * Optional: `appendBatch` for events the caller has already encoded (`SessionWriter` then keeps its
   * unsynced queue as bytes off the JS heap, not as event objects). The lines hold seqs
   * `expectedSeq` to `expectedSeq + lines.count - 1`, in order, each line within `maxEventBytes`: the
   * caller guarantees both (and that each line is an event the catalog accepts), so the backend
   * checks only `expectedSeq`. Same failures, retry and all-or-nothing rules as `appendBatch`. The backend must not touch `lines.chunks` once the promise settles.
   */
  appendLines?(sessionId: SessionId, lines: EncodedLines, expectedSeq: number): Promise<void>
  /**
   * Reads and validates a whole session against the event catalog (`UNKNOWN_EVENT_TYPE`, or
   * `CORRUPT_LOG` with the catalog's `INVALID_EVENT` as `cause`); mends a torn tail (see `LoadReport`).
   */
  load(sessionId: SessionId): Promise<LoadedLog>
  /** Reads events from `fromSeq` on. */
  read(sessionId: SessionId, fromSeq: number): AsyncIterable<SessionEvent>
  /** Every stored session's header, and the entries that could not be read; never rejects for one bad entry. */
  list(): Promise<SessionListing>
  /**
   * Gives back the write lease (and any open handle) of a session after its queued appends settle;
   * a no-op without the lease. The lease is gone even when this rejects (`CLOSE_FAILED`, with `cause`).
   */
  release(sessionId: SessionId): Promise<void>
  /** Releases every lease this instance holds; like `release`, leaves none behind even when it rejects. */
  close(): Promise<void>
}
