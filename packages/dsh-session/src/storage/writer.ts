/**
 * Group commit with backpressure. Events are queued as they are appended; one write is in flight at a
 * time, and what is queued meanwhile goes out as the next `appendBatch` call, at most
 * `maxBatchBytes` per call so that encoding a batch never holds the event loop for long. The queue's
 * size (an estimate of its bytes) is bounded by `highWaterMark` for producers that await `ready()`.
 */
import type { SessionId } from 'dsh-llm'
import { SessionError } from '../errors.ts'
import type { SessionEvent } from '../types.ts'
import type { SessionStorage } from './types.ts'

interface Waiter {
  readonly target: number
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

/** Options of a `SessionWriter`. */
export interface SessionWriterOptions {
  /** Bytes (estimated) of unsynced events above which `ready()` waits. Default 8 MiB. */
  readonly highWaterMark?: number
  /** The most bytes (estimated) one `appendBatch` call carries; one event always fits. Default 1 MiB. */
  readonly maxBatchBytes?: number
}

/** The default high-water mark of a writer's unsynced queue: 8 MiB. */
export const DEFAULT_HIGH_WATER_MARK = 8 * 1024 * 1024
const DEFAULT_MAX_BATCH_BYTES = 1024 * 1024
const RESOLVED = Promise.resolve()

/**
 * Persists one session's events in batches. Writing starts on its own one macrotask after the first
 * enqueue (`setImmediate`), or at once on `flush`, and keeps going while events arrive; after a
 * backend failure it pauses until the next `flush`, which retries the events still queued.
 *
 * Why a macrotask and not a microtask: a burst of appends that runs in microtasks (a model stream
 * replayed from memory, a tool result and its step end) followed by a durability barrier then costs
 * one write and one sync, not one for the first event and another for the rest plus a barrier that
 * waits for both.
 */
export class SessionWriter {
  private queue: SessionEvent[] = []
  /** The estimated size of each queued event, parallel to `queue`. */
  private sizes: number[] = []
  /** Estimated bytes of every event enqueued and not yet durable (queued or in flight). */
  private unsynced = 0
  private readonly highWaterMark: number
  private readonly maxBatchBytes: number
  /** The error of the last failed batch while writing is paused. */
  private failure: SessionError | undefined
  private readyWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = []
  private durable: number
  private enqueued: number
  private writing = false
  private paused = false
  /** The pending automatic start, if one is scheduled and has not run yet. */
  private scheduled: NodeJS.Immediate | undefined
  private waiters: Waiter[] = []
  private waiterHead = 0

  constructor(
    private readonly storage: SessionStorage,
    private readonly sessionId: SessionId,
    nextSeq: number,
    options: SessionWriterOptions = {},
  ) {
    this.durable = nextSeq
    this.enqueued = nextSeq
    this.highWaterMark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK
    this.maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES
  }

  /** Estimated bytes of the events enqueued and not yet durable. */
  get unsyncedBytes(): number {
    return this.unsynced
  }

  /**
   * Resolves once the unsynced queue is at or below the high-water mark: a producer that awaits this
   * before each append keeps the queue (and its memory) bounded while the backend is slow. Rejects
   * with the backend's failure if writing stopped while it waited.
   */
  ready(): Promise<void> {
    if (this.unsynced <= this.highWaterMark) return Promise.resolve()
    if (this.paused && this.failure !== undefined) return Promise.reject(this.failure)
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }))
  }

  /** Whether the unsynced queue is above the high-water mark, so that `ready()` would wait. */
  get overHighWaterMark(): boolean {
    return this.unsynced > this.highWaterMark
  }

  /** The seq below which every event is durable. */
  get durableSeq(): number {
    return this.durable
  }

  /** Queues a committed event (its seq must be the next one) for the next batch. */
  enqueue(event: SessionEvent): void {
    const size = estimateBytes(event.data) + 64
    this.queue.push(event)
    this.sizes.push(size)
    this.unsynced += size
    this.enqueued++
    if (!this.writing && !this.paused && this.scheduled === undefined) {
      this.scheduled = setImmediate(() => {
        this.scheduled = undefined
        if (this.writing || this.paused) return
        this.writing = true
        void this.pump()
      })
    }
  }

  /**
   * Resolves when every event enqueued before this call is durable. Rejects with `SessionError`
   * `STORAGE` if the backend fails; the events stay queued and a later `flush` retries them.
   */
  flush(): Promise<void> {
    const target = this.enqueued
    if (this.durable >= target) return Promise.resolve()
    const promise = new Promise<void>((resolve, reject) => this.waiters.push({ target, resolve, reject }))
    this.paused = false
    this.failure = undefined
    if (!this.writing) {
      if (this.scheduled !== undefined) clearImmediate(this.scheduled)
      this.scheduled = undefined
      this.writing = true
      // A microtask, so appends made in the same synchronous run still join this batch. A resolved
      // promise's callback, not queueMicrotask: Node wraps each queueMicrotask callback in an
      // AsyncResource, a cost the profile showed on every barrier.
      void RESOLVED.then(() => this.pump())
    }
    return promise
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      const { batch, bytes } = this.takeBatch()
      try {
        await this.storage.appendBatch(this.sessionId, batch, this.durable)
      } catch (cause) {
        this.queue = this.queue.length === 0 ? batch : batch.concat(this.queue)
        this.sizes = this.pendingSizes.concat(this.sizes)
        this.pendingSizes = []
        this.writing = false
        this.paused = true
        this.rejectAll(cause, batch)
        return
      }
      this.pendingSizes = []
      this.durable += batch.length
      this.unsynced -= bytes
      this.settle()
    }
    this.writing = false
  }

  /** Sizes of the batch in flight, kept to requeue them if it fails. */
  private pendingSizes: number[] = []

  /** Takes the queue's head up to `maxBatchBytes` (at least one event) as the next batch. */
  private takeBatch(): { batch: SessionEvent[]; bytes: number } {
    let bytes = 0
    let count = 0
    while (count < this.sizes.length) {
      const size = this.sizes[count] ?? 0
      if (count > 0 && bytes + size > this.maxBatchBytes) break
      bytes += size
      count++
    }
    let batch: SessionEvent[]
    if (count === this.queue.length) {
      batch = this.queue
      this.pendingSizes = this.sizes
      this.queue = []
      this.sizes = []
    } else {
      batch = this.queue.slice(0, count)
      this.pendingSizes = this.sizes.slice(0, count)
      this.queue = this.queue.slice(count)
      this.sizes = this.sizes.slice(count)
    }
    return { batch, bytes }
  }

  private settle(): void {
    if (this.readyWaiters.length > 0 && this.unsynced <= this.highWaterMark) {
      const ready = this.readyWaiters
      this.readyWaiters = []
      for (const waiter of ready) waiter.resolve()
    }
    while (this.waiterHead < this.waiters.length) {
      const waiter = this.waiters[this.waiterHead]
      if (waiter === undefined || waiter.target > this.durable) break
      this.waiterHead++
      waiter.resolve()
    }
    this.compactWaiters()
  }

  private rejectAll(cause: unknown, batch: readonly SessionEvent[]): void {
    const first = batch[0]?.seq ?? this.durable
    const last = first + batch.length - 1
    const reason = cause instanceof Error ? cause.message : String(cause)
    const error = new SessionError(
      'STORAGE',
      `session ${this.sessionId}: could not persist events ${first}..${last}: ${reason}`,
      { sessionId: this.sessionId, seq: first },
      { cause },
    )
    this.failure = error
    const ready = this.readyWaiters
    this.readyWaiters = []
    for (const waiter of ready) waiter.reject(error)
    const waiters = this.waiters
    const head = this.waiterHead
    this.waiters = []
    this.waiterHead = 0
    for (let i = head; i < waiters.length; i++) waiters[i]?.reject(error)
  }

  private compactWaiters(): void {
    if (this.waiterHead === this.waiters.length) {
      this.waiters = []
      this.waiterHead = 0
    }
  }
}

/**
 * A cheap estimate of the JSON size of `value` in bytes: string lengths plus a little per member.
 * Used only to bound memory, so it counts what the queue holds, not exact serialized bytes.
 */
function estimateBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2
    case 'object': {
      if (value === null) return 4
      let total = 2
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) total += estimateBytes(value[i]) + 1
        return total
      }
      const record = value as Record<string, unknown>
      for (const key in record) total += key.length + 4 + estimateBytes(record[key])
      return total
    }
    default:
      return 8
  }
}
