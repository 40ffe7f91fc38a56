/**
 * Where a JSONL durability barrier waits for the disk. An `fdatasync` on libuv's thread pool keeps
 * the event loop free while the disk works, but costs two cross-thread wake-ups per barrier (measured
 * ~50–100 µs each on 2-core VMs, a fifth of a fast disk's sync); an inline `fdatasyncSync` costs only
 * the sync itself but holds the event loop for it. The adaptive policy syncs inline while the disk
 * answers within a budget (a moving average of the inline syncs, so one late sync is tolerated) and
 * moves to the thread pool for a while once it does not. It comes back early when the pooled syncs
 * show the disk fast again: one stall on a shared disk then costs a few dozen pooled syncs, not the
 * whole back-off; a disk that keeps stalling doubles the proof it must give each time.
 */
import { fdatasync, fdatasyncSync } from 'node:fs'
import { performance } from 'node:perf_hooks'

/**
 * Closed: how a JSONL storage syncs.
 * - `auto`: inline while the moving average of inline sync times (weight 1/5 for the newest) stays
 *   within the budget (default 2 ms); once it does not, on the thread pool for the back-off period
 *   (default 10 s), then inline again. One sync of ≥ ~5× the budget moves at once. It returns inline
 *   before the back-off ends once `FIRST_PROBATION` (16) pooled syncs have completed since the move
 *   and their moving average (call to callback) is within half the budget; when the disk turns slow again
 *   within a back-off period of such a return, the next return needs twice as many. The default.
 * - `inline`: always `fdatasyncSync` on the event loop (what a one-session tool does).
 * - `thread-pool`: always `fs.fdatasync` on libuv's thread pool; the event loop never waits for the
 *   disk. For network file systems, disks that can stall, or many sessions syncing at once.
 */
export type JsonlSyncMode = 'auto' | 'inline' | 'thread-pool'

/** Tuning of the `auto` mode. */
export interface AdaptiveSyncOptions {
  /** Once the moving average of inline sync times exceeds this (ms), syncs go to the thread pool. Default 2. */
  readonly budgetMs?: number
  /** How long (ms) syncs stay on the thread pool after a slow inline one. Default 10,000. */
  readonly backoffMs?: number
}

/** The system calls and clock a policy uses; injectable so tests can time and fail them. */
export interface SyncCalls {
  syncInline(fd: number): void
  syncPooled(fd: number, done: (error: Error | null) => void): void
  /** Milliseconds, monotonic. */
  now(): number
}

/** Node's calls and `performance.now`. */
export const nodeSyncCalls: SyncCalls = {
  syncInline: (fd) => fdatasyncSync(fd),
  syncPooled: (fd, done) => fdatasync(fd, done),
  now: () => performance.now(),
}

const RESOLVED: Promise<void> = Promise.resolve()

export const DEFAULT_INLINE_SYNC_BUDGET_MS = 2
export const DEFAULT_SYNC_BACKOFF_MS = 10_000
/** The newest inline sync's weight in the moving average (and the newest header read's, in a listing). */
export const AVERAGE_WEIGHT = 0.2
/**
 * Pooled syncs, completed since the move to the thread pool, that `auto` needs before it may return
 * inline early (their moving average within half the budget). Doubles on each relapse.
 */
export const FIRST_PROBATION = 16
/** The longest probation (a cap on the doubling; by then the back-off period ends first). */
const MAX_PROBATION = 1 << 20

/**
 * One sync policy. `sync(fd)` resolves once everything written to `fd` is durable and rejects with
 * the system call's error otherwise (an inline failure rejects too; it never throws synchronously).
 */
export class SyncPolicy {
  private readonly budgetMs: number
  private readonly backoffMs: number
  /** Before this time (`calls.now()`), `auto` syncs go to the thread pool. */
  private poolUntil = Number.NEGATIVE_INFINITY
  private pooledInFlight = 0
  /** Moving average of the inline sync times since the last switch, ms; undefined before the first. */
  private averageMs: number | undefined
  /** Pooled syncs (call to callback) since the move to the pool: their count and moving average, ms. */
  private pooledCount = 0
  private pooledAverageMs: number | undefined
  /** How many fast pooled syncs the current back-off needs before an early return inline. */
  private probation = FIRST_PROBATION
  /** When `auto` last returned inline before its back-off ended (`calls.now()`). */
  private returnedAt = Number.NEGATIVE_INFINITY

  constructor(
    readonly mode: JsonlSyncMode,
    private readonly calls: SyncCalls = nodeSyncCalls,
    options: AdaptiveSyncOptions = {},
  ) {
    this.budgetMs = options.budgetMs ?? DEFAULT_INLINE_SYNC_BUDGET_MS
    this.backoffMs = options.backoffMs ?? DEFAULT_SYNC_BACKOFF_MS
  }

  /** Whether the next sync would run inline (for tests and diagnostics). */
  get nextIsInline(): boolean {
    if (this.mode !== 'auto') return this.mode === 'inline'
    // A pooled sync still running means the disk was slow a moment ago, or another barrier overlaps.
    return this.pooledInFlight === 0 && this.calls.now() >= this.poolUntil
  }

  sync(fd: number): Promise<void> {
    if (!this.nextIsInline) return this.pooled(fd)
    const started = this.calls.now()
    try {
      this.calls.syncInline(fd)
    } catch (error) {
      return Promise.reject(error)
    } finally {
      if (this.mode === 'auto') this.observe(started, this.calls.now())
    }
    return RESOLVED
  }

  private observe(started: number, ended: number): void {
    const took = ended - started
    const average =
      this.averageMs === undefined ? took : this.averageMs + AVERAGE_WEIGHT * (took - this.averageMs)
    if (average <= this.budgetMs) {
      this.averageMs = average
      return
    }
    // Slow again soon after an early return: ask for twice the proof before the next one.
    const relapse = ended - this.returnedAt < this.backoffMs
    this.probation = relapse ? Math.min(this.probation * 2, MAX_PROBATION) : FIRST_PROBATION
    this.poolUntil = ended + this.backoffMs
    this.averageMs = undefined
    this.pooledCount = 0
    this.pooledAverageMs = undefined
  }

  /** A pooled sync of `auto` completed: return inline early once enough of them were fast. */
  private observePooled(started: number, ended: number): void {
    if (ended >= this.poolUntil) return
    const took = ended - started
    const average =
      this.pooledAverageMs === undefined
        ? took
        : this.pooledAverageMs + AVERAGE_WEIGHT * (took - this.pooledAverageMs)
    this.pooledAverageMs = average
    this.pooledCount++
    if (this.pooledCount < this.probation || average > this.budgetMs / 2) return
    this.poolUntil = Number.NEGATIVE_INFINITY
    this.returnedAt = ended
  }

  private pooled(fd: number): Promise<void> {
    this.pooledInFlight++
    const started = this.calls.now()
    return new Promise<void>((resolve, reject) =>
      this.calls.syncPooled(fd, (error) => {
        this.pooledInFlight--
        if (error !== null) {
          reject(error)
          return
        }
        if (this.mode === 'auto') this.observePooled(started, this.calls.now())
        resolve()
      }),
    )
  }
}
