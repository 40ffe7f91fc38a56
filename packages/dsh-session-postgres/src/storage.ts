/**
 * `SessionStorage` on PostgreSQL: fenced appends, leases renewed in the background, paged reads,
 * and mailbox deliveries recorded in the same transaction as the append that logs them.
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { performance } from 'node:perf_hooks'
import type { SessionId } from 'dsh-llm'
import {
  bothFailures,
  checkBatch,
  type LoadedLog,
  SESSION_FORMAT_VERSION,
  SessionError,
  SessionErrorCode,
  type SessionEvent,
  type SessionFileHeader,
  type SessionListing,
  type SessionStorage,
} from 'dsh-session'
import pg from 'pg'
import { appendFenced } from './append.ts'
import { isConnectionFailure, type Timeouts, withClient } from './connection.ts'
import { type Delivery, deliveriesIn, markDelivered } from './deliveries.ts'
import { encodeEvents } from './encode.ts'
import { isLeaseLost, leaseLost } from './errors.ts'
import { refence, releaseLease, renewLeases, takeLease } from './lease.ts'
import { checkSchema } from './migrations.ts'
import { surviveIdleErrors } from './pool-errors.ts'
import { type HeaderPage, listAll, listHeaderPage, readEvents, readHeader } from './read.ts'
import {
  type AppendListener,
  DEFAULT_CONNECTION_TIMEOUT_MS,
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  type DeliveredListener,
  type LeaseLostListener,
  type PostgresStorageOptions,
} from './storage-options.ts'
import { inTransaction } from './transaction.ts'

/** The wait for a reply beyond the server's statement timeout, ms: the server's cancel comes first. */
const REPLY_GRACE_MS = 2_000
/** Attempts at an append whose outcome was unknown (each re-fences, then retries) before it is reported. */
const SETTLE_ATTEMPTS = 3

/** A connection that could not be had: `STORAGE` from `withClient` (nothing was sent). */
function isStorageFailure(error: unknown): boolean {
  return error instanceof SessionError && error.code === SessionErrorCode.STORAGE
}

/** `APPEND_OUTCOME_UNKNOWN` for a batch whose attempts all ended without a known outcome. */
function outcomeUnknown(sessionId: SessionId, seq: number, count: number, cause: unknown): SessionError {
  return new SessionError(
    SessionErrorCode.APPEND_OUTCOME_UNKNOWN,
    `session ${sessionId}: append of seqs ${seq}..${seq + count - 1}: the database connection failed and the outcome could not be settled (${String(cause)}); retrying the same batch at seq ${seq} is safe`,
    { sessionId, seq },
    { cause },
  )
}

/** A refusal that settled an unknown outcome, with the failures before it kept as its cause. */
function withUnknown(error: SessionError, before: unknown): SessionError {
  return new SessionError(error.code as SessionErrorCode, error.message, error.where, {
    cause: bothFailures(before, error.cause ?? error, 'an append whose outcome was unknown'),
  })
}

interface Held {
  token: string
  /** Set once a takeover was observed: every later append fails with it at once. */
  deposed?: SessionError
  /** Appends run one after another in call order; `release` waits for the chain to settle. */
  queue: Promise<void>
  /** Mailbox messages awaiting their logging event: message id → mailbox row id. */
  readonly awaited: Map<string, string>
  /** Release with `wants_host` set: queued work remains. */
  wantsHost?: boolean
}

/**
 * The PostgreSQL backend. Create it with `PostgresStorage.connect` (which checks the schema
 * version; run `migrate` first). Every session it writes it holds by lease: `create` and `acquire`
 * take it (a lease not renewed within `leaseTtlMs` may be taken over by another writer, which raises
 * the fencing token), a background timer renews held leases, and every append presents the token
 * in the same statement that writes the events — a deposed writer's appends fail with
 * `SessionError` `LEASE_LOST`, and it is told through `onLeaseLost`.
 */
export class PostgresStorage implements SessionStorage {
  /** The pool in use. */
  readonly pool: pg.Pool
  /** This writer's name on its leases. */
  readonly owner: string
  /** The lease TTL in ms. */
  readonly leaseTtlMs: number
  /** The largest serialized event accepted, in UTF-8 bytes. */
  readonly maxEventBytes: number
  private readonly ownsPool: boolean
  private readonly pageSize: number
  private readonly held = new Map<string, Held>()
  private readonly lostListeners = new Set<LeaseLostListener>()
  private readonly deliveredListeners = new Set<DeliveredListener>()
  private readonly appendListeners = new Set<AppendListener>()
  private readonly renewTimer: NodeJS.Timeout
  private renewing: Promise<void> | undefined
  /** When (`performance.now()`) the renewal in flight started. */
  private renewingSince = 0
  private readonly renewEveryMs: number
  private readonly timeouts: Timeouts
  private closed = false

  private constructor(options: PostgresStorageOptions) {
    if (options.pool !== undefined) {
      this.pool = options.pool
      this.ownsPool = false
    } else if (options.connectionString !== undefined) {
      const statementMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS
      this.pool = new pg.Pool({
        connectionString: options.connectionString,
        max: options.poolSize ?? 10,
        connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
        statement_timeout: statementMs,
        idle_in_transaction_session_timeout: statementMs,
        query_timeout: statementMs + REPLY_GRACE_MS,
      })
      this.ownsPool = true
    } else {
      throw new TypeError('PostgresStorage: pass `pool` or `connectionString`')
    }
    // An idle client dying (server restart) must not crash the process; the next query reports it.
    surviveIdleErrors(this.pool)
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    this.leaseTtlMs = options.leaseTtlMs ?? 30_000
    this.pageSize = options.pageSize ?? 1000
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES
    this.timeouts = {
      connectMs: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
      queryMs: (options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS) + REPLY_GRACE_MS,
    }
    const every = options.renewEveryMs ?? Math.max(1, Math.floor(this.leaseTtlMs / 3))
    this.renewEveryMs = every
    this.renewTimer = setInterval(() => void this.renewNow().catch(() => undefined), every)
    this.renewTimer.unref()
  }

  /** Connects and checks the schema version (`SCHEMA_OUT_OF_DATE`: run `migrate` first). */
  static async connect(options: PostgresStorageOptions): Promise<PostgresStorage> {
    const storage = new PostgresStorage(options)
    try {
      await checkSchema(storage.pool)
    } catch (error) {
      let closing: unknown
      await storage.close().catch((failure: unknown) => {
        closing = failure
      })
      if (closing === undefined) throw error
      throw Object.assign(new Error(`checking the schema failed, then closing the storage failed too`), {
        cause: bothFailures(error, closing, 'closing after a failed schema check'),
      })
    }
    return storage
  }

  /** Calls `listener` when a held lease is found taken over; returns a disposer. */
  onLeaseLost(listener: LeaseLostListener): () => void {
    this.lostListeners.add(listener)
    return () => this.lostListeners.delete(listener)
  }

  /** Calls `listener` after an append that recorded mailbox messages committed; returns a disposer. */
  onDelivered(listener: DeliveredListener): () => void {
    this.deliveredListeners.add(listener)
    return () => this.deliveredListeners.delete(listener)
  }

  /** Calls `listener` after every append attempt (for acknowledgements and latency); returns a disposer. */
  onAppend(listener: AppendListener): () => void {
    this.appendListeners.add(listener)
    return () => this.appendListeners.delete(listener)
  }

  /** Whether this storage holds `sessionId`'s lease and has not seen it taken over. */
  holds(sessionId: SessionId): boolean {
    const held = this.held.get(sessionId)
    return held !== undefined && held.deposed === undefined
  }

  /** The fencing token this storage presents for `sessionId`, if it holds the lease. */
  tokenOf(sessionId: SessionId): string | undefined {
    return this.held.get(sessionId)?.token
  }

  /** The ids of the sessions whose leases this storage holds. */
  heldSessions(): SessionId[] {
    return [...this.held.keys()] as SessionId[]
  }

  /**
   * Makes the next append of `sessionId` that logs message `messageId` (a splice inserting it, or a
   * `user/message` with its id) mark mailbox row `mailboxId` delivered in the same transaction.
   */
  awaitDelivery(sessionId: SessionId, messageId: string, mailboxId: string): void {
    this.held.get(sessionId)?.awaited.set(messageId, mailboxId)
  }

  /** Whether a delivery of `messageId` to `sessionId` is awaiting its append here. */
  isAwaiting(sessionId: SessionId, messageId: string): boolean {
    return this.held.get(sessionId)?.awaited.has(messageId) ?? false
  }

  /**
   * Creates the session row and its lease (token 1) in one statement. Throws `ALREADY_EXISTS` for a
   * taken id and `UNSUPPORTED_VERSION` for a header of another format version.
   */
  async create(header: SessionFileHeader): Promise<void> {
    const id = header.sessionId
    if (header.version !== SESSION_FORMAT_VERSION) {
      throw new SessionError(
        SessionErrorCode.UNSUPPORTED_VERSION,
        `session ${id}: this storage writes format version ${SESSION_FORMAT_VERSION}, not ${header.version}`,
        { sessionId: id },
      )
    }
    const created = await this.pool.query<{ token: string }>(
      `WITH s AS (
         INSERT INTO dsh_sessions (id, format_version, created_at, parent_id, parent_seed_length, fence_token)
         VALUES ($1, $2, $3, $4, $5, 1) ON CONFLICT (id) DO NOTHING RETURNING id
       )
       INSERT INTO dsh_leases (session_id, owner, token, expires_at)
       SELECT id, $6, 1, now() + $7 * interval '1 millisecond' FROM s RETURNING token::text AS token`,
      [
        id,
        header.version,
        header.createdAt,
        header.parent?.sessionId ?? null,
        header.parent?.seedLength ?? null,
        this.owner,
        this.leaseTtlMs,
      ],
    )
    const token = created.rows[0]?.token
    if (token === undefined) {
      throw new SessionError(SessionErrorCode.ALREADY_EXISTS, `session ${id} already exists`, {
        sessionId: id,
      })
    }
    this.held.set(id, { token, awaited: new Map(), queue: Promise.resolve() })
  }

  /**
   * Takes the lease of an existing session if it is free or expired (a takeover: the token rises and
   * the old holder is fenced). Throws `NOT_FOUND`, or `LOCKED` while a live holder — this instance
   * included — has it.
   */
  async acquire(sessionId: SessionId): Promise<void> {
    if (this.holds(sessionId)) {
      throw new SessionError(
        SessionErrorCode.LOCKED,
        `session ${sessionId} is already held by this writer (${this.owner})`,
        { sessionId },
      )
    }
    const token = await takeLease(this.pool, sessionId, this.owner, this.leaseTtlMs)
    this.held.set(sessionId, { token, awaited: new Map(), queue: Promise.resolve() })
  }

  /**
   * Appends a batch in one fenced statement (or, when it logs awaited mailbox messages, in one
   * transaction with marking them delivered). Throws `LOCKED` without the lease, `EVENT_TOO_LARGE`
   * for an event over `maxEventBytes`, `LEASE_LOST` once the lease was taken over (and reports the
   * loss), `SEQ_MISMATCH`, or the driver's error. Nothing is written when it throws.
   */
  appendBatch(sessionId: SessionId, events: readonly SessionEvent[], expectedSeq: number): Promise<void> {
    const held = this.held.get(sessionId)
    if (held === undefined) {
      return Promise.reject(
        new SessionError(
          SessionErrorCode.LOCKED,
          `session ${sessionId}: append at seq ${expectedSeq} without holding the write lease; create or acquire it first`,
          { sessionId, seq: expectedSeq },
        ),
      )
    }
    const run = () => this.observed(sessionId, held, events, expectedSeq)
    const done = held.queue.then(run, run)
    held.queue = done.catch(() => undefined)
    return done
  }

  private async observed(
    sessionId: SessionId,
    held: Held,
    events: readonly SessionEvent[],
    expectedSeq: number,
  ): Promise<void> {
    if (this.appendListeners.size === 0) return this.appendHeld(sessionId, held, events, expectedSeq)
    const started = performance.now()
    const last = events[events.length - 1]
    const base = { sessionId, firstSeq: expectedSeq, count: events.length, token: held.token }
    const outcome = last === undefined ? base : { ...base, lastType: last.type }
    try {
      await this.appendHeld(sessionId, held, events, expectedSeq)
    } catch (error) {
      const failed = { ...outcome, ms: performance.now() - started, error }
      for (const listener of this.appendListeners) contained(() => listener(failed))
      throw error
    }
    const done = { ...outcome, ms: performance.now() - started }
    for (const listener of this.appendListeners) contained(() => listener(done))
  }

  private async appendHeld(
    sessionId: SessionId,
    held: Held,
    events: readonly SessionEvent[],
    expectedSeq: number,
  ): Promise<void> {
    if (held.deposed !== undefined) throw held.deposed
    checkBatch(sessionId, events, expectedSeq)
    const encoded = encodeEvents(sessionId, events, this.maxEventBytes)
    const deliveries = held.awaited.size === 0 ? [] : deliveriesIn(events, held.awaited)
    let unknown: unknown
    for (let attempt = 0; ; attempt++) {
      try {
        if (unknown !== undefined) await this.refence(sessionId, held)
        await this.appendOnce(sessionId, held, events, expectedSeq, encoded, deliveries)
        break
      } catch (error) {
        if (error instanceof SessionError && isLeaseLost(error)) this.depose(sessionId, held, error)
        if (!isConnectionFailure(error) && !(unknown !== undefined && isStorageFailure(error))) {
          if (unknown === undefined || !(error instanceof SessionError)) throw error
          throw withUnknown(error, unknown)
        }
        unknown = unknown === undefined ? error : bothFailures(unknown, error, 'settling an append')
        if (attempt + 1 >= SETTLE_ATTEMPTS)
          throw outcomeUnknown(sessionId, expectedSeq, events.length, unknown)
      }
    }
    for (const delivery of deliveries) held.awaited.delete(delivery.messageId)
    for (const listener of this.deliveredListeners) contained(() => listener(sessionId, deliveries))
  }

  /** One attempt at the fenced append (with its deliveries, in one transaction) on its own connection. */
  private appendOnce(
    sessionId: SessionId,
    held: Held,
    events: readonly SessionEvent[],
    expectedSeq: number,
    encoded: readonly string[],
    deliveries: readonly Delivery[],
  ): Promise<void> {
    const { queryMs } = this.timeouts
    return withClient(
      this.pool,
      this.timeouts,
      `session ${sessionId}: append at seq ${expectedSeq}`,
      async (client) => {
        if (deliveries.length === 0) {
          await appendFenced(client, sessionId, held.token, events, expectedSeq, encoded, queryMs)
          return
        }
        await inTransaction(client, queryMs, async (tx) => {
          const found = await appendFenced(tx, sessionId, held.token, events, expectedSeq, encoded, queryMs)
          // Found whole: the attempt that stored it marked its deliveries in the same transaction.
          if (found < events.length) await markDelivered(tx, sessionId, deliveries)
        })
      },
    )
  }

  /**
   * After an append whose reply was lost: raises this writer's own fencing token, so the lost
   * statement (if still on its way) can no longer land, and the retry that follows finds the batch
   * stored or not, for certain. A lease no longer held with the token is left to the retry to report.
   */
  private async refence(sessionId: SessionId, held: Held): Promise<void> {
    const { queryMs } = this.timeouts
    const token = await withClient(this.pool, this.timeouts, `session ${sessionId}: re-fencing`, (client) =>
      refence(client, sessionId, this.owner, held.token, this.leaseTtlMs, queryMs),
    )
    if (token !== undefined) held.token = token
  }

  /** Loads the whole session, page by page. `report.repairedEvents` is 0 (the store adds closers). */
  async load(sessionId: SessionId): Promise<LoadedLog> {
    const header = await readHeader(this.pool, sessionId)
    const events: SessionEvent[] = []
    for await (const event of this.read(sessionId, 0)) events.push(event)
    return { header, events, report: { repairedEvents: 0 } }
  }

  /** Yields events with seq ≥ `fromSeq`, one page of `pageSize` rows in memory at a time. */
  async *read(sessionId: SessionId, fromSeq: number): AsyncIterable<SessionEvent> {
    yield* readEvents(this.pool, sessionId, fromSeq, this.pageSize)
  }

  /**
   * Every stored session's header, oldest first (read in pages), and the rows this code cannot read
   * (a newer format version) as problems located at `dsh_sessions/<id>`.
   */
  async list(): Promise<SessionListing> {
    return listAll((cursor) => this.listPage(cursor))
  }

  /** One page of headers (oldest first) after `cursor` (from the previous page's `next`). */
  async listPage(cursor?: string, limit = this.pageSize): Promise<HeaderPage> {
    return listHeaderPage(this.pool, cursor, limit)
  }

  /**
   * Frees the lease (if still ours) and forgets the session. If `markWantsHost(sessionId)` was called
   * while holding it, the freed lease is flagged as having queued work for fleet hosts to claim.
   */
  async release(sessionId: SessionId): Promise<void> {
    const held = this.held.get(sessionId)
    if (held === undefined) return
    this.held.delete(sessionId)
    await held.queue
    if (held.deposed === undefined)
      await releaseLease(this.pool, sessionId, held.token, held.wantsHost === true)
  }

  /** Flags the held session so its release leaves it claimable (its inbox still has queued work). */
  markWantsHost(sessionId: SessionId): void {
    const held = this.held.get(sessionId)
    if (held !== undefined) held.wantsHost = true
  }

  /** Drops the delivery of `messageId` awaited for `sessionId` (it will not be logged here). */
  forgetDelivery(sessionId: SessionId, messageId: string): void {
    this.held.get(sessionId)?.awaited.delete(messageId)
  }

  /**
   * Renews every held lease now (the timer does this every `renewEveryMs`). Leases found taken over
   * are marked deposed and reported to `onLeaseLost` listeners.
   */
  renewNow(): Promise<void> {
    // A renewal in flight for longer than the renewal period is not waited for: one hung
    // connection must not stall every later renewal (its own wait ends with its query timeout).
    if (this.renewing !== undefined && performance.now() - this.renewingSince <= this.renewEveryMs)
      return this.renewing
    const renewal = this.renewHeld().finally(() => {
      if (this.renewing === renewal) this.renewing = undefined
    })
    this.renewing = renewal
    this.renewingSince = performance.now()
    return renewal
  }

  /** Stops renewing, releases every held lease, and ends the pool if this storage made it. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.renewTimer)
    await this.renewing?.catch(() => undefined)
    const failures: unknown[] = []
    for (const sessionId of this.heldSessions()) {
      await this.release(sessionId).catch((error: unknown) => failures.push(error))
    }
    if (this.ownsPool) await this.pool.end().catch((error: unknown) => failures.push(error))
    if (failures.length > 0) {
      throw new SessionError(
        SessionErrorCode.CLOSE_FAILED,
        `closing the PostgreSQL storage (${this.owner}): ${failures.map(String).join('; then ')}`,
        {},
        { cause: failures.length === 1 ? failures[0] : new AggregateError(failures, 'closing the storage') },
      )
    }
  }

  private async renewHeld(): Promise<void> {
    const live = new Map<string, string>()
    for (const [id, held] of this.held) if (held.deposed === undefined) live.set(id, held.token)
    const queryMs = Math.min(this.timeouts.queryMs, Math.max(1, this.renewEveryMs))
    const renewed = await withClient(this.pool, { ...this.timeouts, queryMs }, 'renewing leases', (client) =>
      renewLeases(client, this.owner, live, this.leaseTtlMs, queryMs),
    )
    for (const [id, token] of live) {
      const held = this.held.get(id)
      if (renewed.has(id) || held === undefined || held.token !== token) continue
      const error = leaseLost(
        id,
        `lease renewal found token ${token} stale: another writer took the session over`,
      )
      this.depose(id as SessionId, held, error)
    }
  }

  private depose(sessionId: SessionId, held: Held, error: SessionError): void {
    if (held.deposed !== undefined) return
    held.deposed = error
    held.awaited.clear()
    for (const listener of this.lostListeners) contained(() => listener(sessionId, error))
  }
}

function contained(call: () => void): void {
  try {
    call()
  } catch {
    // A listener's failure is its own; it must not fail the append that already committed.
  }
}
