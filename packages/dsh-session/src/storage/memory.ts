/**
 * The in-memory backend: the default storage of `Sessions`, and the reference for what the seam
 * promises (leases, seq checks on every batch, the size limit). Instances can share one backing.
 */
import type { SessionId } from 'dsh-llm'
import { eventAt, evictChunksBefore, type LogEntry } from '../chunk-runs.ts'
import { SessionError, SessionErrorCode } from '../errors.ts'
import type { SessionEvent, SessionFileHeader, SessionListing } from '../types.ts'
import { checkBatch, checkStoredEvent } from './batch-check.ts'
import { eventBytesOver, eventTooLarge } from './event-size.ts'
import type { InlineTarget } from './inline-writer.ts'
import { DEFAULT_MAX_EVENT_BYTES, type LoadedLog, type SessionStorage } from './types.ts'

interface StoredSession {
  readonly header: SessionFileHeader
  /** Slot i holds seq i; a committed step's chunk events are one shared `ChunkRun` (see chunk-runs.ts). */
  readonly events: LogEntry[]
  /** The instance holding the write lease, if any. */
  holder: MemoryStorage | undefined
}

/** Options of `MemoryStorage`. */
export interface MemoryStorageOptions {
  /** The per-event size limit in serialized bytes; defaults to `DEFAULT_MAX_EVENT_BYTES`. */
  readonly maxEventBytes?: number
  /** Share this other instance's sessions, as a second process would share a database. */
  readonly sharing?: MemoryStorage
}

/**
 * Keeps sessions in process memory; nothing survives the process. Leases are enforced per instance:
 * `create`/`acquire` of a session another instance (or this one) holds is refused with `LOCKED`, and
 * so is an `appendBatch` without the lease. Events are stored as given (committed events are frozen),
 * except that a step's chunk events are folded into the compact run the session built for them once
 * the step's `assistant/message` is stored; `load` and `read` return them rebuilt, equal to the originals.
 */
export class MemoryStorage implements SessionStorage {
  readonly maxEventBytes: number
  private readonly sessions: Map<string, StoredSession>

  constructor(options: MemoryStorageOptions = {}) {
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES
    this.sessions = options.sharing?.sessions ?? new Map()
  }

  async create(header: SessionFileHeader): Promise<void> {
    if (this.sessions.has(header.sessionId)) {
      throw new SessionError(SessionErrorCode.ALREADY_EXISTS, `session ${header.sessionId} already exists`, {
        sessionId: header.sessionId,
      })
    }
    this.sessions.set(header.sessionId, { header: Object.freeze({ ...header }), events: [], holder: this })
  }

  async acquire(sessionId: SessionId): Promise<void> {
    const stored = this.require(sessionId)
    if (stored.holder !== undefined) {
      throw new SessionError(SessionErrorCode.LOCKED, `session ${sessionId} is held by another writer`, {
        sessionId,
      })
    }
    stored.holder = this
  }

  async appendBatch(
    sessionId: SessionId,
    events: readonly SessionEvent[],
    expectedSeq: number,
  ): Promise<void> {
    const stored = this.require(sessionId)
    if (stored.holder !== this) {
      throw new SessionError(
        SessionErrorCode.LOCKED,
        `session ${sessionId}: append without holding the write lease`,
        { sessionId },
      )
    }
    checkBatch(sessionId, events, expectedSeq)
    for (const event of events) {
      const size = eventBytesOver(event, this.maxEventBytes)
      if (size !== undefined) throw eventTooLarge(event, size, this.maxEventBytes, sessionId)
    }
    const next = stored.events.length
    let batch = events
    if (expectedSeq !== next) {
      // A retried batch whose first attempt was stored: settle it, never write it twice.
      const found = expectedSeq < next ? this.storedPrefix(stored, events, expectedSeq) : 0
      if (found === 0 || (found < events.length && found < next - expectedSeq)) {
        throw new SessionError(
          SessionErrorCode.SEQ_MISMATCH,
          `session ${sessionId}: batch expected at seq ${expectedSeq} but the next seq is ${next}`,
          { sessionId, seq: expectedSeq },
        )
      }
      batch = events.slice(found)
    }
    const entries = stored.events
    for (let i = 0; i < batch.length; i++) {
      const event = batch[i] as SessionEvent
      const index = entries.length
      entries[index] = event
      if (event.type === 'assistant/message') evictChunksBefore(entries, index)
    }
  }

  /**
   * Whether sessions may hand this instance each committed event at once (`inlineTarget`) instead of
   * batching them through `appendBatch`. False for a subclass that overrides `appendBatch` or adds
   * `appendLines` (to observe, gate or encode writes): it gets batches, as any other backend.
   */
  get writesInline(): boolean {
    return (
      this.appendBatch === MemoryStorage.prototype.appendBatch &&
      (this as SessionStorage).appendLines === undefined
    )
  }

  /**
   * One session's inline append: the checks of `appendBatch` (the write lease, the next seq) without
   * its size walk, since the session enforced a limit no higher than this instance's before it
   * committed the event. Throws `NOT_FOUND` now, and `LOCKED` or `SEQ_MISMATCH` from `append`.
   */
  inlineTarget(sessionId: SessionId): InlineTarget {
    const stored = this.require(sessionId)
    return {
      append: (event) => {
        if (stored.holder !== this) {
          throw new SessionError(
            SessionErrorCode.LOCKED,
            `session ${sessionId}: append without holding the write lease`,
            { sessionId },
          )
        }
        const entries = stored.events
        const index = entries.length
        if (event.seq !== index) {
          throw new SessionError(
            SessionErrorCode.SEQ_MISMATCH,
            `session ${sessionId}: event ${event.type} has seq ${event.seq}, but the next seq is ${index}`,
            { sessionId, seq: event.seq, eventType: event.type },
          )
        }
        entries[index] = event
        if (event.type === 'assistant/message') evictChunksBefore(entries, index)
      },
    }
  }

  /**
   * Reads the whole session and checks each event against the event catalog as every backend's load
   * does: `UNKNOWN_EVENT_TYPE` for a type no longer defined, `CORRUPT_LOG` for one its schema refuses.
   */
  async load(sessionId: SessionId): Promise<LoadedLog> {
    const stored = this.require(sessionId)
    const events: SessionEvent[] = []
    for (let seq = 0; seq < stored.events.length; seq++) {
      const event = eventAt(stored.events, seq) as SessionEvent
      checkStoredEvent(sessionId, event, seq)
      events.push(event)
    }
    return { header: stored.header, events, report: { repairedEvents: 0 } }
  }

  async *read(sessionId: SessionId, fromSeq: number): AsyncIterable<SessionEvent> {
    const stored = this.require(sessionId)
    for (let seq = Math.max(0, fromSeq); seq < stored.events.length; seq++) {
      const event = eventAt(stored.events, seq)
      if (event !== undefined) yield event
    }
  }

  /** Every session's header, oldest first; memory has no bad entries, so `problems` is empty. */
  async list(): Promise<SessionListing> {
    const sessions = [...this.sessions.values()]
      .map((stored) => stored.header)
      .sort((a, b) => a.createdAt - b.createdAt || (a.sessionId < b.sessionId ? -1 : 1))
    return { sessions, problems: [] }
  }

  async release(sessionId: SessionId): Promise<void> {
    const stored = this.sessions.get(sessionId)
    if (stored !== undefined && stored.holder === this) stored.holder = undefined
  }

  async close(): Promise<void> {
    for (const stored of this.sessions.values()) if (stored.holder === this) stored.holder = undefined
  }

  /** How many leading events of `events` (from `expectedSeq`) are stored already, equal as JSON. */
  private storedPrefix(stored: StoredSession, events: readonly SessionEvent[], expectedSeq: number): number {
    let found = 0
    while (found < events.length && expectedSeq + found < stored.events.length) {
      const have = eventAt(stored.events, expectedSeq + found)
      if (JSON.stringify(have) !== JSON.stringify(events[found])) break
      found++
    }
    return found
  }

  private require(sessionId: SessionId): StoredSession {
    const stored = this.sessions.get(sessionId)
    if (stored === undefined)
      throw new SessionError(SessionErrorCode.NOT_FOUND, `no stored session ${sessionId}`, { sessionId })
    return stored
  }
}
