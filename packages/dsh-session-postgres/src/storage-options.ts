/** The options of `PostgresStorage` and the listeners it calls. */
import type { SessionId } from 'dsh-llm'
import type { SessionError } from 'dsh-session'
import type pg from 'pg'
import type { Delivery } from './deliveries.ts'

/** Options of `PostgresStorage`. */
export interface PostgresStorageOptions {
  /** A pool to use (the caller keeps owning it), or ... */
  readonly pool?: pg.Pool
  /** ... a connection string for a pool this storage owns and ends on `close`. */
  readonly connectionString?: string
  /** Pool size when the storage makes its own pool. Default 10. */
  readonly poolSize?: number
  /** This writer's name on its leases. Default `<hostname>:<pid>:<random>`; must be unique per instance. */
  readonly owner?: string
  /** How long a lease lasts without renewal, in ms (database clock). Default 30 000. */
  readonly leaseTtlMs?: number
  /** How often held leases are renewed, in ms. Default a third of the TTL. */
  readonly renewEveryMs?: number
  /** Events per page when loading or reading a session, sessions per page in `list`. Default 1000. */
  readonly pageSize?: number
  /** The largest serialized event accepted, in UTF-8 bytes. Default 16 MiB. */
  readonly maxEventBytes?: number
  /**
   * How long one statement may run, in ms. Default 15 000. The storage waits at most this plus 2 s
   * for any reply (then the connection is destroyed; for an append the outcome is settled or
   * reported `APPEND_OUTCOME_UNKNOWN`); on a pool the storage makes, the server also cancels a
   * statement after this (`statement_timeout`) and ends a session idle inside a transaction after it
   * (`idle_in_transaction_session_timeout`). Set the server-side limits on a pool you pass yourself.
   */
  readonly statementTimeoutMs?: number
  /** How long to wait for a database connection (new or pooled), in ms. Default 5 000. */
  readonly connectionTimeoutMs?: number
}

/** The default `statementTimeoutMs`. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000
/** The default `connectionTimeoutMs`. */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000

/** The default per-event size limit (the seam's default): 16 MiB of serialized JSON. */
export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024

/** Told when this storage loses a lease it held (a takeover raised the token); `error` is `LEASE_LOST`. */
export type LeaseLostListener = (sessionId: SessionId, error: SessionError) => void

/** One finished `appendBatch` call: what it tried, with which token, how long it took, how it failed. */
export interface AppendOutcome {
  readonly sessionId: SessionId
  readonly firstSeq: number
  readonly count: number
  /** The last event's type (absent for an empty batch). */
  readonly lastType?: string
  readonly token: string
  /** Wall time of the database work, in ms. */
  readonly ms: number
  /** Absent when the batch committed. */
  readonly error?: unknown
}

/** Told after every append attempt of a held session, committed or not. */
export type AppendListener = (outcome: AppendOutcome) => void

/** Told when mailbox messages were durably logged (in the transaction of their append). */
export type DeliveredListener = (sessionId: SessionId, deliveries: readonly Delivery[]) => void
