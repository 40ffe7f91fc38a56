/** What a live session needs of the writer that persists its committed events. */
import type { ChunkRun } from '../chunk-runs.ts'
import type { RunLog } from '../run-log.ts'
import type { SessionEvent } from '../types.ts'

/**
 * Takes a session's committed events, in seq order, to its storage. `SessionWriter` batches them
 * (group commit, for backends with I/O); `InlineWriter` hands each to an in-process backend at once.
 */
export interface EventWriter {
  /** A log the session should keep its events in (an in-process backend's, shared), if any. */
  readonly sharedLog?: RunLog | undefined
  /** Estimated bytes of the events taken and not yet durable. */
  readonly unsyncedBytes: number
  /** Whether the unsynced events are above the high-water mark, so that `ready()` would wait. */
  readonly overHighWaterMark: boolean
  /** The seq below which every event is durable. */
  readonly durableSeq: number
  /**
   * Takes a committed event (its seq must be the next one). `estimate`: what the write queue would
   * estimate of `event.data`, when the caller knows it without a walk (-1: unknown).
   */
  enqueue(event: SessionEvent, estimate?: number): void
  /**
   * Takes a committed chunk entry, seq `seq` of `run` (the next seq; the session's log keeps the run,
   * and no event object exists). `estimate`: what the write queue would estimate of its payload
   * (-1: unknown).
   */
  enqueueChunk(run: ChunkRun, seq: number, estimate: number): void
  /**
   * Resolves when every event taken before the call is durable; rejects with `SessionError`
   * `STORAGE` if the backend fails (the events are kept, and a later `flush` retries them).
   */
  flush(): Promise<void>
  /** Resolves once the unsynced events are at or below the high-water mark (see `SessionWriter`). */
  ready(): Promise<void>
  /** Stops any pending background work; the store calls it once the session is closed. */
  dispose(): void
}
