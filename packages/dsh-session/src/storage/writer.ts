/**
 * Group commit. Events are queued as they are appended; one write is in flight at a time, and
 * everything queued meanwhile goes out as the next single `appendBatch` call.
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
  ) {
    this.durable = nextSeq
    this.enqueued = nextSeq
  }

  /** The seq below which every event is durable. */
  get durableSeq(): number {
    return this.durable
  }

  /** Queues a committed event (its seq must be the next one) for the next batch. */
  enqueue(event: SessionEvent): void {
    this.queue.push(event)
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
    if (!this.writing) {
      if (this.scheduled !== undefined) clearImmediate(this.scheduled)
      this.scheduled = undefined
      this.writing = true
      // A microtask, so appends made in the same synchronous run still join this batch.
      queueMicrotask(() => void this.pump())
    }
    return promise
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      try {
        await this.storage.appendBatch(this.sessionId, batch, this.durable)
      } catch (cause) {
        this.queue = this.queue.length === 0 ? batch : batch.concat(this.queue)
        this.writing = false
        this.paused = true
        this.rejectAll(cause, batch)
        return
      }
      this.durable += batch.length
      this.settle()
    }
    this.writing = false
  }

  private settle(): void {
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
