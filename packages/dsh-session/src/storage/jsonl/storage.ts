/**
 * The embedded default storage: one JSONL file per session in a directory, group-committed appends,
 * a lock file per session so that only one writer (across processes) appends to it.
 */

import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import type { LoadReport, SessionEvent, SessionFileHeader, SessionListing } from '../../types.ts'
import { checkBatch, storedPrefix } from '../batch-check.ts'
import { bothFailures, failureOf, withCleanupFailure } from '../failures.ts'
import { encodeBatch } from '../json-lines.ts'
import { DEFAULT_MAX_EVENT_BYTES, type EncodedLines, type LoadedLog, type SessionStorage } from '../types.ts'
import { writeBatch } from './append.ts'
import { encodeHeader, SESSION_FORMAT, SESSION_FORMAT_VERSION } from './codec.ts'
import { alreadyExists, heldHere, notFound, seqMismatch, storageError } from './errors.ts'
import { type AppendIo, createFileAtomically, nodeAppendIoWith, truncateAt } from './files.ts'
import { assertSameFile, assertStillOwned, identityOf, type Lease } from './lease.ts'
import { type ListingReads, listSessions } from './listing.ts'
import { DEFAULT_LEASE_TTL_MS, errorCode, FileLock } from './lock.ts'
import { exposureOf, makeDirectory, resolveModes, type StorageModes } from './modes.ts'
import { closeReader, openForRead, SAFE_ID, scanFile } from './reading.ts'
import { eventTexts } from './run-line.ts'
import { scanSession } from './scan.ts'
import { type AdaptiveSyncOptions, DEFAULT_INLINE_SYNC_BUDGET_MS, type JsonlSyncMode } from './sync-policy.ts'

const RESOLVED: Promise<void> = Promise.resolve()

/** Options of `JsonlStorage`. */
export interface JsonlStorageOptions {
  /** The directory holding `<sessionId>.jsonl` files (created on first `create`). */
  readonly dir: string
  /** The write and sync calls of the append path; defaults to Node's. For tests that count or fail them. */
  readonly io?: AppendIo
  /**
   * How barriers wait for the disk when `io` is not given (see `JsonlSyncMode`): `auto` (default)
   * syncs inline while the disk answers within the budget (`syncTuning`), else on the thread pool for a while.
   * `list()` reads the session headers the same way (see `ListingReads`): inline, in time slices, unless
   * this is `thread-pool`; in `auto` a header read over the budget sends the rest of that listing to the pool.
   */
  readonly sync?: JsonlSyncMode
  /** Tuning of the `auto` sync mode: the inline budget and the thread-pool back-off. */
  readonly syncTuning?: AdaptiveSyncOptions
  /** The per-event size limit in serialized bytes; defaults to `DEFAULT_MAX_EVENT_BYTES` (16 MiB). */
  readonly maxEventBytes?: number
  /**
   * The lease TTL in ms (default 30 s): the holder refreshes its lock's heartbeat every third of it,
   * and a lock held from another host is taken over once its heartbeat is older than this.
   */
  readonly leaseTtlMs?: number
  /**
   * The permission mode of the session, lock and temp files this storage creates; default `0o600`
   * (owner read/write only). Widen it (e.g. `0o640`) only to share sessions on purpose: sessions
   * hold every prompt, file and tool output the agent saw. Must keep the owner's read and write.
   */
  readonly fileMode?: number
  /**
   * The permission mode of the session folder when this storage creates it; default `0o700`. An
   * existing folder is left as it is. Must keep the owner's read, write and search.
   */
  readonly dirMode?: number
}

/**
 * `SessionStorage` over JSONL files. Each file is a header line then one event per line. `appendBatch`
 * writes a batch with one write and one fdatasync and resolves after the sync; `load` truncates a torn
 * final line and refuses any other defect without touching the file. Writes need the session's lease
 * (`create` or `acquire`), a lock file `<sessionId>.lock` that a live holder in any process keeps.
 */
export class JsonlStorage implements SessionStorage {
  readonly dir: string
  readonly maxEventBytes: number
  private readonly io: AppendIo
  private readonly leaseTtlMs: number
  private readonly leases = new Map<string, Lease>()
  private readonly modes: StorageModes
  private readonly listingReads: ListingReads

  constructor(options: JsonlStorageOptions) {
    this.dir = options.dir
    this.modes = resolveModes(options)
    this.io = options.io ?? nodeAppendIoWith(options.sync ?? 'auto', options.syncTuning)
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES
    this.leaseTtlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS
    this.listingReads = {
      mode: options.sync ?? 'auto',
      budgetMs: options.syncTuning?.budgetMs ?? DEFAULT_INLINE_SYNC_BUDGET_MS,
    }
  }

  /** The session file's path. Throws `STORAGE` for an id that is not a safe file name. */
  fileOf(sessionId: string): string {
    if (!SAFE_ID.test(sessionId)) {
      throw new SessionError(
        SessionErrorCode.STORAGE,
        `session id ${JSON.stringify(sessionId)} is not usable as a file name (letters, digits, '.', '_', '-')`,
        { sessionId },
      )
    }
    return join(this.dir, `${sessionId}.jsonl`)
  }

  /**
   * Creates `<id>.jsonl` holding only the header, atomically, and takes its lease. Throws
   * `ALREADY_EXISTS` for an existing id, `LOCKED` if another writer holds the id's lock,
   * `UNSUPPORTED_VERSION` for a header of another format version.
   */
  async create(header: SessionFileHeader): Promise<void> {
    const id = header.sessionId
    const file = this.fileOf(id)
    if (header.format !== SESSION_FORMAT || header.version !== SESSION_FORMAT_VERSION) {
      throw new SessionError(
        SessionErrorCode.UNSUPPORTED_VERSION,
        `session ${id}: this storage writes ${SESSION_FORMAT} version ${SESSION_FORMAT_VERSION}, not ${header.format} version ${header.version}`,
        { sessionId: id, file },
      )
    }
    await this.fs(id, file, () => makeDirectory(this.dir, this.modes.dir))
    if (await this.exists(id, file)) throw alreadyExists(id, file)
    if (this.leases.has(id)) throw heldHere(id, file)
    const lease = await this.takeLease(id, file)
    try {
      const created = await this.fs(id, file, () =>
        createFileAtomically(this.dir, file, encodeHeader(header), this.modes.file),
      )
      if (!created) throw alreadyExists(id, file)
      lease.identity = await this.fs(id, file, async () => identityOf(file))
    } catch (error) {
      throw withCleanupFailure(error, await failureOf(this.release(id)), `releasing the lease of ${id}`)
    }
    lease.nextSeq = 0
    lease.size = encodeHeader(header).length
  }

  /** Takes the lease of an existing session. Throws `NOT_FOUND`, or `LOCKED` if any holder (this storage too) has it. */
  async acquire(sessionId: SessionId): Promise<void> {
    const file = this.fileOf(sessionId)
    if (this.leases.has(sessionId)) throw heldHere(sessionId, file)
    if (!(await this.exists(sessionId, file))) throw notFound(sessionId, file)
    const lease = await this.takeLease(sessionId, file)
    try {
      lease.identity = await this.fs(sessionId, file, async () => identityOf(file))
      if (lease.identity === undefined) throw notFound(sessionId, file)
    } catch (error) {
      throw withCleanupFailure(
        error,
        await failureOf(this.release(sessionId)),
        `releasing the lease of ${sessionId}`,
      )
    }
  }

  /**
   * Appends `events` (seqs `expectedSeq`, `expectedSeq + 1`, ...) with one write and one sync; resolves
   * once they are durable. Throws `SEQ_MISMATCH` if `expectedSeq` is not the file's next seq or the batch
   * is not contiguous, the catalog's `UNKNOWN_EVENT_TYPE`/`INVALID_EVENT`, `LOCKED` without the
   * lease, `STORAGE` if writing or syncing failed: the file is then cut back to its last durable
   * batch, so retrying the same batch is safe. If even that fails, `APPEND_OUTCOME_UNKNOWN` (cause:
   * an `AggregateError` of the write's and the cut-back's failures), and the next append cuts back
   * first. A batch already in the file from `expectedSeq` on is found and not written twice.
   */
  appendBatch(sessionId: SessionId, events: readonly SessionEvent[], expectedSeq: number): Promise<void> {
    return this.inTurn(sessionId, (lease, file) =>
      this.withNextSeq(lease, sessionId, file, () =>
        this.appendEvents(lease, sessionId, file, events, expectedSeq),
      ),
    )
  }

  /**
   * `appendBatch` for lines the caller encoded (see `SessionStorage.appendLines`): written as they
   * are, with the same sync, seq check on `expectedSeq`, cut-back on failure and lease checks.
   */
  appendLines(sessionId: SessionId, encoded: EncodedLines, expectedSeq: number): Promise<void> {
    const lease = this.leases.get(sessionId)
    // A version 1 file stays readable by version 1 readers: its appends carry event lines only.
    const linesFor = (held: Lease) => (held.eventLinesOnly === true ? asEventLines(encoded) : encoded)
    // The writer's case at every barrier: idle, next seq known. Straight to the checks and the write,
    // with no closures and no hop through the queue (the same steps as the general path below).
    if (lease !== undefined && lease.pending === 0 && lease.nextSeq === expectedSeq) {
      const lines = linesFor(lease)
      let done: Promise<void>
      try {
        this.checkNextSeq(lease, sessionId, lease.file, expectedSeq)
        done =
          lines.count === 0
            ? RESOLVED
            : writeBatch(this.io, lease, sessionId, lease.file, lines.chunks, expectedSeq, lines.count)
      } catch (error) {
        done = Promise.reject(error)
      }
      return this.track(lease, done)
    }
    return this.inTurn(sessionId, (lease, file) =>
      this.withNextSeq(lease, sessionId, file, () => {
        const lines = linesFor(lease)
        if (this.isRetry(lease, expectedSeq, lines.count)) {
          // Run lines expanded: the stored file is compared, and the rest written, event by event.
          const texts = eventTexts(Buffer.concat(lines.chunks).toString('utf8'), lines.count)
          return this.settleRetry(lease, sessionId, file, texts, expectedSeq, (stored) => {
            const rest = Buffer.from(`${texts.slice(stored).join('\n')}\n`, 'utf8')
            return writeBatch(
              this.io,
              lease,
              sessionId,
              file,
              [rest],
              expectedSeq + stored,
              lines.count - stored,
            )
          })
        }
        this.checkNextSeq(lease, sessionId, file, expectedSeq)
        if (lines.count === 0) return RESOLVED
        return writeBatch(this.io, lease, sessionId, file, lines.chunks, expectedSeq, lines.count)
      }),
    )
  }

  /**
   * Runs `append` after the session's appends before it (at once when idle; a synchronous throw
   * becomes the rejection); `LOCKED` without the lease.
   */
  private inTurn(sessionId: SessionId, append: (lease: Lease, file: string) => Promise<void>): Promise<void> {
    const lease = this.leases.get(sessionId)
    if (lease === undefined) {
      const file = this.fileOf(sessionId)
      return Promise.reject(
        new SessionError(
          SessionErrorCode.LOCKED,
          `session ${sessionId} (${file}): this storage does not hold its write lease; create or acquire it first`,
          { sessionId, file },
        ),
      )
    }
    const run = () => {
      try {
        return append(lease, lease.file)
      } catch (error) {
        return Promise.reject(error)
      }
    }
    // Idle: start at once (no hop through the queue); busy: run after the appends before it.
    return this.track(lease, lease.pending === 0 ? run() : lease.queue.then(run, run))
  }

  /** Counts `done` as the lease's latest append until it settles, and returns it. */
  private track(lease: Lease, done: Promise<void>): Promise<void> {
    lease.pending++
    lease.queue = done.then(lease.settled, lease.settled)
    return done
  }

  /**
   * Reads the whole session. A torn final line is cut off the file (when no other live writer holds the
   * session) and reported; `repairedEvents` is always 0 here; `exposed` names the file when others can
   * read it (see `fileMode`). Throws `NOT_FOUND`, `UNSUPPORTED_VERSION`, `UNKNOWN_EVENT_TYPE`, or
   * `CORRUPT_LOG` naming file, line and expected seq (the file is then untouched).
   */
  async load(sessionId: SessionId): Promise<LoadedLog> {
    const file = this.fileOf(sessionId)
    const lease = this.leases.get(sessionId)
    if (lease !== undefined) await lease.queue
    const loaded = await this.loadNow(sessionId, file, lease)
    const exposed = await exposureOf(sessionId, file, this.modes.file)
    return exposed === undefined ? loaded : { ...loaded, report: { ...loaded.report, exposed } }
  }

  /**
   * The headers of every session file, the entries that are not readable sessions (see
   * `listSessions`), and in `exposed` the session files others can read (see `fileMode`).
   */
  async list(): Promise<SessionListing> {
    return listSessions(this.dir, this.modes.file, this.listingReads)
  }

  /** Yields the session's events with seq ≥ `fromSeq`; same checks as `load`, but never writes. */
  async *read(sessionId: SessionId, fromSeq: number): AsyncIterable<SessionEvent> {
    const file = this.fileOf(sessionId)
    const handle = await openForRead(sessionId, file)
    try {
      for await (const batch of scanSession(handle, file, sessionId, { nextSeq: 0, end: 0 })) {
        for (const event of batch) if (event.seq >= fromSeq) yield event
      }
    } finally {
      await closeReader(handle)
    }
  }

  /**
   * Waits for queued appends, closes the file and removes the lock file if it is still ours. Both
   * steps are always tried: if either fails the lease is still forgotten here and this rejects with
   * `CLOSE_FAILED` naming the session, with the first failure as `cause`.
   */
  async release(sessionId: SessionId): Promise<void> {
    const lease = this.leases.get(sessionId)
    if (lease === undefined) return
    await lease.queue
    this.leases.delete(sessionId)
    const file = this.fileOf(sessionId)
    const failures: unknown[] = []
    await lease.handle?.close().catch((error: unknown) => failures.push(error))
    await lease.lock.release().catch((error: unknown) => failures.push(error))
    if (failures.length > 0) {
      throw new SessionError(
        SessionErrorCode.CLOSE_FAILED,
        `session ${sessionId} (${file}): releasing the lease failed: ${failures.map(String).join('; then ')}`,
        { sessionId, file },
        { cause: bothFailures(failures[0], failures[1], `releasing session ${sessionId}`) },
      )
    }
  }

  /** Releases every lease this storage holds (waiting for queued appends); tries all, then rejects with the first failure. */
  async close(): Promise<void> {
    const failures: unknown[] = []
    for (const sessionId of [...this.leases.keys()]) {
      await this.release(SessionId(sessionId)).catch((error: unknown) => failures.push(error))
    }
    if (failures.length === 1) throw failures[0]
    if (failures.length > 1) {
      throw new SessionError(
        SessionErrorCode.CLOSE_FAILED,
        `closing the JSONL storage in ${this.dir}: ${failures.length} releases failed: ${failures.map(String).join('; ')}`,
        {},
        { cause: new AggregateError(failures, `closing ${this.dir}`) },
      )
    }
  }

  private async loadNow(sessionId: SessionId, file: string, lease: Lease | undefined): Promise<LoadedLog> {
    const events: SessionEvent[] = []
    const state = await scanFile(sessionId, file, (batch) => {
      for (const event of batch) events.push(event)
    })
    const header = state.header
    if (header === undefined) throw new Error('unreachable: scan ends with a header')
    const report: { -readonly [K in keyof LoadReport]: LoadReport[K] } = { repairedEvents: 0 }
    if (state.torn !== undefined) {
      if (lease === undefined)
        return this.loadUnderTemporaryLease(sessionId, file, { header, events, report })
      const offset = state.torn.offset
      await this.fs(sessionId, file, () =>
        truncateAt(file, offset, (found) => assertSameFile(lease, sessionId, file, found)),
      )
      report.truncatedTail = { line: state.torn.line, bytes: state.torn.bytes }
    }
    if (lease !== undefined) {
      lease.nextSeq = state.nextSeq
      lease.size = state.end
      lease.eventLinesOnly = header.version < 2
    }
    return { header, events, report }
  }

  /** Runs `append` once the file's next seq is known: at once, or after reading the file's tail. */
  private withNextSeq(
    lease: Lease,
    sessionId: SessionId,
    file: string,
    append: () => Promise<void>,
  ): Promise<void> {
    if (lease.nextSeq !== undefined) return append()
    assertStillOwned(lease, sessionId, file)
    return this.loadNow(sessionId, file, lease).then(append)
  }

  private appendEvents(
    lease: Lease,
    sessionId: SessionId,
    file: string,
    events: readonly SessionEvent[],
    expectedSeq: number,
  ): Promise<void> {
    checkBatch(sessionId, events, expectedSeq)
    if (this.isRetry(lease, expectedSeq, events.length)) {
      const encoded = events.map((event) => JSON.stringify(event))
      return this.settleRetry(lease, sessionId, file, encoded, expectedSeq, (stored) =>
        this.appendEvents(lease, sessionId, file, events.slice(stored), expectedSeq + stored),
      )
    }
    this.checkNextSeq(lease, sessionId, file, expectedSeq)
    if (events.length === 0) return RESOLVED
    const encoded = encodeBatch(sessionId, events, this.maxEventBytes)
    if (Array.isArray(encoded))
      return writeBatch(this.io, lease, sessionId, file, encoded, expectedSeq, events.length)
    return encoded.then((slices) => {
      // Encoding yielded to the event loop: check the lease and file again before writing.
      assertStillOwned(lease, sessionId, file)
      return writeBatch(this.io, lease, sessionId, file, slices, expectedSeq, events.length)
    })
  }

  /** Whether a non-empty batch at `expectedSeq` starts before the file's next seq: a retry to settle. */
  private isRetry(lease: Lease, expectedSeq: number, count: number): boolean {
    return count > 0 && lease.nextSeq !== undefined && expectedSeq < lease.nextSeq && expectedSeq >= 0
  }

  /**
   * A batch at a seq the file has passed: if the file's events from `expectedSeq` are the batch's
   * leading lines (an earlier attempt landed), only the rest is written (nothing when all of it is
   * there); any other content is `SEQ_MISMATCH`.
   */
  private async settleRetry(
    lease: Lease,
    sessionId: SessionId,
    file: string,
    encoded: readonly string[],
    expectedSeq: number,
    writeRest: (stored: number) => Promise<void>,
  ): Promise<void> {
    assertStillOwned(lease, sessionId, file)
    const nextSeq = lease.nextSeq ?? 0
    const stored = await storedPrefix(this.read(sessionId, expectedSeq), encoded)
    if (stored === encoded.length) return
    if (stored === nextSeq - expectedSeq) return writeRest(stored)
    throw seqMismatch(
      sessionId,
      file,
      `expected seq ${nextSeq}, got a batch at seq ${expectedSeq} whose events differ from the stored ones`,
      nextSeq,
    )
  }

  /** Checks the lease, the file and that `expectedSeq` is the file's next seq (which must be known). */
  private checkNextSeq(lease: Lease, sessionId: SessionId, file: string, expectedSeq: number): void {
    assertStillOwned(lease, sessionId, file)
    const nextSeq = lease.nextSeq ?? 0
    if (expectedSeq !== nextSeq) {
      throw seqMismatch(
        sessionId,
        file,
        `expected seq ${nextSeq}, got a batch at seq ${expectedSeq}`,
        nextSeq,
      )
    }
  }

  /** A torn tail found without the lease: mend it under a momentary lease, unless a live writer has one. */
  private async loadUnderTemporaryLease(
    sessionId: SessionId,
    file: string,
    unmended: LoadedLog,
  ): Promise<LoadedLog> {
    try {
      await this.takeLease(sessionId, file)
    } catch (error) {
      // The live writer's batch may still be landing: leave its file alone, return what is complete.
      if (error instanceof SessionError && error.code === SessionErrorCode.LOCKED) return unmended
      throw error
    }
    try {
      // Re-read under the lease: the file may have changed since the first scan.
      return await this.load(sessionId)
    } finally {
      await this.release(sessionId)
    }
  }

  private async takeLease(sessionId: string, file: string): Promise<Lease> {
    const lockPath = join(this.dir, `${sessionId}.lock`)
    const subject = { sessionId, file }
    const lock = await FileLock.acquire(lockPath, subject, this.leaseTtlMs, this.modes.file).catch(
      (error) => {
        if (error instanceof SessionError) throw error
        throw storageError(`cannot take the lock of session ${sessionId} (${file})`, subject, error)
      },
    )
    const lease: Lease = {
      lock,
      file,
      dir: this.dir,
      queue: RESOLVED,
      pending: 0,
      size: 0,
      settled: () => {
        lease.pending--
      },
    }
    this.leases.set(sessionId, lease)
    return lease
  }

  private async exists(sessionId: string, file: string): Promise<boolean> {
    try {
      await stat(file)
      return true
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return false
      throw storageError(`cannot stat ${file}`, { sessionId, file }, error)
    }
  }

  /** Runs a file-system step, turning its failure into a `STORAGE` error naming the session. */
  private async fs<T>(sessionId: string, file: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step()
    } catch (error) {
      if (error instanceof SessionError) throw error
      throw storageError(`session ${sessionId} (${file}): ${String(error)}`, { sessionId, file }, error)
    }
  }
}

/** `lines` with every run line expanded into the event lines it stands for (for a version 1 file). */
function asEventLines(lines: EncodedLines): EncodedLines {
  const text = Buffer.concat(lines.chunks).toString('utf8')
  if (!text.includes('{"run":')) return lines
  return {
    count: lines.count,
    chunks: [Buffer.from(`${eventTexts(text, lines.count).join('\n')}\n`, 'utf8')],
  }
}
