/**
 * Group commit with backpressure. Events are queued as they are appended; one write is in flight at a
 * time, and what is queued meanwhile goes out as the next `appendBatch` (or `appendLines`) call, at
 * most `maxBatchBytes` per call so that encoding a batch never holds the event loop for long. The
 * queue's size (an estimate of its bytes) is bounded by `highWaterMark` for producers that await
 * `ready()`.
 */
import { performance } from 'node:perf_hooks'
import type { SessionId } from 'dsh-llm'
import type { ChunkRun } from '../chunk-runs.ts'
import { SessionError, SessionErrorCode } from '../errors.ts'
import { nextSlice, sliceSpent } from '../time-slice.ts'
import type { SessionEvent } from '../types.ts'
import { storedPrefix } from './batch-check.ts'
import type { EventWriter } from './event-writer.ts'
import { hasSessionCode } from './failures.ts'
import { DEFAULT_MAX_EVENT_BYTES, type SessionStorage } from './types.ts'
import { batchEvents, type TakenBatch, WriteQueue } from './write-queue.ts'

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
  /**
   * How long (ms) writing waits after the first event enqueued without a `flush`, so that a barrier
   * arriving meanwhile writes everything in one batch. 0 starts one macrotask later. Default 2.
   */
  readonly commitDelayMs?: number
}

/** The default commit delay of a writer's background writes, ms. */
export const DEFAULT_COMMIT_DELAY_MS = 2

/** The default high-water mark of a writer's unsynced queue: 8 MiB. */
export const DEFAULT_HIGH_WATER_MARK = 8 * 1024 * 1024
const DEFAULT_MAX_BATCH_BYTES = 1024 * 1024
const RESOLVED = Promise.resolve()
/** Waits before each retry of a batch whose append had an unknown outcome, ms; then the flush fails. */
const UNSETTLED_RETRY_MS = [10, 100, 500, 1500]

/**
 * Persists one session's events in batches. Writing starts on its own `commitDelayMs` after the
 * first enqueue (2 ms by default; 0 means one macrotask later), or at once on `flush`, and keeps
 * going while events arrive; after a backend failure it pauses until the next `flush`, which retries
 * the events still queued.
 *
 * Why wait at all: a caller with barriers (the agent loop flushes before every model request and
 * tool call) then pays one write and one sync per barrier, like a program that writes only at its
 * barriers. Starting one macrotask later instead let a write start whenever the loop yielded between
 * two barriers (a time slice, a tool), which cost ~0.45 extra syncs per durable tool-loop step.
 * Events are durable no later than a `flush`; the delay only bounds how long an unflushed event
 * waits for its background write.
 */
export class SessionWriter implements EventWriter {
  private readonly queue: WriteQueue
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
  private scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined
  /**
   * With a commit delay: when (`performance.now()`) the first event enqueued since writing last
   * started was enqueued, or -1 when none waits. A flush clears it instead of clearing the timer;
   * a timer that then fires with nothing waiting does nothing, and one that fires early for a later
   * event re-arms for the rest of that event's delay (see `startLater`).
   */
  private waitingSince = -1
  private readonly commitDelayMs: number
  private waiters: Waiter[] = []
  /** An append's outcome was unknown and no later attempt has settled it yet. */
  private unsettled = false
  private waiterHead = 0

  /**
   * A writer for `sessionId` whose next event has seq `nextSeq`. Over a backend with `appendLines`,
   * each event is encoded when it is enqueued (while the queue is under its mark), so the queue holds
   * bytes outside the JS heap rather than the events' strings.
   */
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
    this.commitDelayMs = options.commitDelayMs ?? DEFAULT_COMMIT_DELAY_MS
    const maxEventBytes = storage.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES
    this.queue = new WriteQueue(storage.appendLines !== undefined, maxEventBytes, this.highWaterMark)
  }

  /** Estimated bytes of the events enqueued and not yet durable. */
  get unsyncedBytes(): number {
    return this.unsynced
  }

  /**
   * Resolves once the unsynced queue is at or below the high-water mark: a producer that awaits this
   * before each append keeps the queue (and its memory) bounded while the backend is slow. Under the
   * mark it resolves at once, except that once producers awaiting it have held the current
   * event-loop turn for 2 ms it resolves in the next turn, so that a bulk producer (whose events are
   * encoded as they are enqueued) never holds the loop for long. Rejects with the backend's failure
   * if writing stopped while it waited.
   */
  ready(): Promise<void> {
    if (this.unsynced <= this.highWaterMark) return sliceSpent() ? nextSlice() : Promise.resolve()
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

  /**
   * Queues a committed event (its seq must be the next one) for the next batch. `estimate`: what the
   * queue would estimate of `event.data` (`estimateBytes`), when the caller knows it without a walk.
   */
  enqueue(event: SessionEvent, estimate = -1): void {
    this.unsynced += this.queue.add(event, this.unsynced > this.highWaterMark, estimate)
    this.enqueued++
    this.startSoon()
  }

  /** Queues a committed chunk entry (seq `seq` of `run`, the next seq) for the next batch, without an event. */
  enqueueChunk(run: ChunkRun, seq: number, estimate: number): void {
    this.unsynced += this.queue.addChunk(run, seq, this.unsynced > this.highWaterMark, estimate)
    this.enqueued++
    this.startSoon()
  }

  /**
   * After an enqueue: arms the background write unless one runs, is armed for a waiting event, or
   * writing is paused. A timer still armed from before the last flush (nothing waits on it) is
   * restarted from now (`refresh`), so a writer flushed more often than its delay (the agent loop's
   * barriers) moves one timer forward instead of taking its expiry: about one expiry per step before
   * (run with an async-context push when async hooks are on, ~14 µs in the durable step's profile).
   */
  private startSoon(): void {
    if (this.writing || this.paused) return
    if (this.commitDelayMs > 0) {
      if (this.waitingSince >= 0) return
      this.waitingSince = performance.now()
      const armed = this.scheduled
      if (armed === undefined) this.scheduled = setTimeout(this.startLater, this.commitDelayMs)
      else (armed as NodeJS.Timeout).refresh()
    } else {
      this.scheduled ??= setImmediate(this.startLater)
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
      this.endWaiting()
      this.writing = true
      // A microtask, so appends made in the same synchronous run still join this batch. A resolved
      // promise's callback, not queueMicrotask: Node wraps each queueMicrotask callback in an
      // AsyncResource, a cost the profile showed on every barrier.
      void RESOLVED.then(() => this.pump())
    }
    return promise
  }

  private readonly startLater = (): void => {
    this.scheduled = undefined
    if (this.writing || this.paused) return
    if (this.commitDelayMs > 0) {
      // Armed for an event a flush has since carried: nothing waits, or a later event has time left.
      if (this.waitingSince < 0) return
      const left = this.waitingSince + this.commitDelayMs - performance.now()
      // Within a millisecond counts as due (the timers' own granularity); whole milliseconds
      // otherwise, since Node keeps one timer list per distinct duration.
      if (left >= 1) {
        this.scheduled = setTimeout(this.startLater, Math.ceil(left))
        return
      }
    }
    this.startWriting()
  }

  private startWriting(): void {
    this.waitingSince = -1
    this.writing = true
    void this.pump()
  }

  /**
   * A flush starts writing: nothing waits for the delay any more. A pending timer is left armed
   * (arming and clearing one per barrier showed in the step profile); with nothing waiting when it
   * fires, it does nothing. A pending immediate is cleared.
   */
  private endWaiting(): void {
    this.waitingSince = -1
    const scheduled = this.scheduled
    if (scheduled === undefined || this.commitDelayMs > 0) return
    this.scheduled = undefined
    clearImmediate(scheduled as NodeJS.Immediate)
  }

  /**
   * Clears a pending background start, so a timer left armed across the last flush keeps neither
   * the process nor this writer (and its storage) alive. The store calls it once the session is
   * closed; events enqueued later still start a write (a closed session appends none).
   */
  dispose(): void {
    this.waitingSince = -1
    const scheduled = this.scheduled
    if (scheduled === undefined) return
    this.scheduled = undefined
    if (this.commitDelayMs > 0) clearTimeout(scheduled as NodeJS.Timeout)
    else clearImmediate(scheduled as NodeJS.Immediate)
  }

  private async pump(): Promise<void> {
    for (;;) {
      // The open run's chunk entries go out at a barrier (a flush waits, or producers wait on the
      // high-water mark), else they wait for their run to end: see `WriteQueue.take`.
      const barrier =
        this.waiterHead < this.waiters.length ||
        this.readyWaiters.length > 0 ||
        this.unsynced > this.highWaterMark
      if (!this.queue.hasReady(barrier)) break
      const batch = this.queue.take(this.maxBatchBytes, barrier)
      try {
        await this.writeSettled(batch)
      } catch (cause) {
        this.queue.putBack(batch)
        this.writing = false
        this.paused = true
        this.rejectAll(cause, batch.count)
        return
      }
      this.durable += batch.count
      this.unsynced -= batch.bytes
      this.queue.done(batch)
      this.settle()
    }
    this.writing = false
  }

  /** One append of `batch` at the durable seq, as events or as encoded lines. */
  private async write(batch: TakenBatch): Promise<void> {
    const { storage } = this
    if (storage.appendLines === undefined) {
      await storage.appendBatch(this.sessionId, batchEvents(batch), this.durable)
    } else {
      const encoded = this.queue.chunks(batch, this.sessionId)
      const chunks = Array.isArray(encoded) ? encoded : await encoded
      await storage.appendLines(this.sessionId, { count: batch.count, chunks }, this.durable)
    }
  }

  /**
   * Writes `batch`, settling an append whose outcome the backend could not tell
   * (`APPEND_OUTCOME_UNKNOWN`): the same batch is retried at the same seq a few times, backing off
   * (a backend stores a batch it finds already there once); a retry refused with `SEQ_MISMATCH` is
   * checked against the stored events, and the batch counts as durable when they are its own. A
   * different stored tail, a lost lease, or an outcome still unknown after the retries is thrown
   * (the batch stays queued; the next `flush` settles it the same way).
   */
  private async writeSettled(batch: TakenBatch): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.write(batch)
        this.unsettled = false
        return
      } catch (error) {
        if (this.unsettled && hasSessionCode(error, SessionErrorCode.SEQ_MISMATCH)) {
          if (await this.storedAlready(batch)) {
            this.unsettled = false
            return
          }
          throw error
        }
        if (hasSessionCode(error, SessionErrorCode.APPEND_OUTCOME_UNKNOWN)) this.unsettled = true
        const stop =
          hasSessionCode(error, SessionErrorCode.LEASE_LOST) || hasSessionCode(error, SessionErrorCode.LOCKED)
        const wait = UNSETTLED_RETRY_MS[attempt]
        if (!this.unsettled || stop || wait === undefined) throw error
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    }
  }

  /** Whether the events stored from the durable seq on are `batch`'s own, line for line. */
  private async storedAlready(batch: TakenBatch): Promise<boolean> {
    const lines = this.queue.lines(batch)
    try {
      return (await storedPrefix(this.storage.read(this.sessionId, this.durable), lines)) === lines.length
    } catch {
      return false
    }
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

  private rejectAll(cause: unknown, count: number): void {
    const first = this.durable
    const last = first + count - 1
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
