/**
 * The writer of a session over an in-process backend (`MemoryStorage`): each committed event goes to
 * the backend as it is committed, so there is no queue, timer or batch, and a barrier (`flush`) costs
 * nothing. The events are durable for that backend at once. If the backend refuses one (a lost lease),
 * it and every later event wait in `pending`: `flush` retries them in order and rejects with
 * `STORAGE` while the backend still refuses, as `SessionWriter` does after a failed batch.
 */
import type { SessionId } from 'dsh-llm'
import type { ChunkRef, ChunkRun } from '../chunk-runs.ts'
import { SessionError } from '../errors.ts'
import type { RunLog } from '../run-log.ts'
import { nextSlice, sliceSpent } from '../time-slice.ts'
import type { SessionEvent } from '../types.ts'
import type { EventWriter } from './event-writer.ts'
import { estimateBytes } from './write-queue.ts'

/** Where an inline writer puts events: one session of an in-process backend. */
export interface InlineTarget {
  /**
   * The backend's log of this (empty) session, for the session to keep its events in, so they are
   * held once: the backend then only counts what `append` and `appendChunk` store.
   */
  readonly log?: RunLog | undefined
  /** Stores `event` (the session's next seq) or throws the backend's refusal, storing nothing. */
  append(event: SessionEvent): void
  /** Stores the chunk entry `seq` of `run` (shared with the session's log), or throws as `append` does. */
  appendChunk(run: ChunkRun, seq: number): void
}

type Pending = SessionEvent | ChunkRef

function isChunkRef(entry: Pending): entry is ChunkRef {
  return 'run' in entry
}

/** The queue-estimate bytes of a pending entry. */
function pendingBytes(entry: Pending): number {
  if (!isChunkRef(entry)) return estimateBytes(entry.data) + entry.type.length
  const { run, seq } = entry
  return 43 + estimateBytes(run.chunkAt(seq)) + 'assistant/chunk'.length
}

const RESOLVED = Promise.resolve()

export class InlineWriter implements EventWriter {
  private pending: Pending[] = []
  private pendingBytes = 0
  private durable: number
  /** The backend's latest refusal, while events wait in `pending`. */
  private refusal: unknown

  constructor(
    private readonly target: InlineTarget,
    private readonly sessionId: SessionId,
    nextSeq: number,
    private readonly highWaterMark: number,
  ) {
    this.durable = nextSeq
  }

  /** The log the session keeps its events in, when the backend shares its own (see `InlineTarget.log`). */
  get sharedLog(): RunLog | undefined {
    return this.target.log
  }

  get unsyncedBytes(): number {
    return this.pendingBytes
  }

  get overHighWaterMark(): boolean {
    return this.pendingBytes > this.highWaterMark
  }

  get durableSeq(): number {
    return this.durable
  }

  enqueue(event: SessionEvent, estimate = -1): void {
    if (this.pending.length === 0) {
      try {
        this.target.append(event)
        this.durable++
        return
      } catch (cause) {
        // Kept with the events after it; the next flush retries and reports the refusal.
        this.refusal = cause
      }
    }
    this.pending.push(event)
    this.pendingBytes += (estimate >= 0 ? estimate : estimateBytes(event.data)) + event.type.length
  }

  enqueueChunk(run: ChunkRun, seq: number, estimate: number): void {
    if (this.pending.length === 0) {
      try {
        this.target.appendChunk(run, seq)
        this.durable++
        return
      } catch (cause) {
        this.refusal = cause
      }
    }
    const entry: ChunkRef = { run, seq }
    this.pending.push(entry)
    this.pendingBytes += estimate >= 0 ? estimate + 'assistant/chunk'.length : pendingBytes(entry)
  }

  flush(): Promise<void> {
    if (this.pending.length === 0) return RESOLVED
    const pending = this.pending
    let stored = 0
    try {
      for (; stored < pending.length; stored++) {
        const entry = pending[stored] as Pending
        if (isChunkRef(entry)) this.target.appendChunk(entry.run, entry.seq)
        else this.target.append(entry)
        this.durable++
      }
    } catch (cause) {
      this.refusal = cause
      this.pending = pending.slice(stored)
      this.pendingBytes = 0
      for (const entry of this.pending) this.pendingBytes += pendingBytes(entry)
      return Promise.reject(this.failure(cause))
    }
    this.pending = []
    this.pendingBytes = 0
    this.refusal = undefined
    return RESOLVED
  }

  ready(): Promise<void> {
    if (this.pendingBytes <= this.highWaterMark) return sliceSpent() ? nextSlice() : RESOLVED
    // Over the mark only while the backend refuses: writing is paused until a flush retries, so
    // report the refusal, as `SessionWriter` does when paused.
    return Promise.reject(this.failure(this.refusal))
  }

  dispose(): void {}

  private failure(cause: unknown): SessionError {
    const first = this.durable
    const last = first + this.pending.length - 1
    const reason = cause instanceof Error ? cause.message : String(cause)
    return new SessionError(
      'STORAGE',
      `session ${this.sessionId}: could not persist events ${first}..${last}: ${reason}`,
      { sessionId: this.sessionId, seq: first },
      { cause },
    )
  }
}
