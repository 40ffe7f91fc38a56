/**
 * The in-memory backend: the default storage of `Sessions`, and the reference for what the seam
 * promises (leases, seq checks on every batch, the size limit). Instances can share one backing.
 */
import type { SessionId } from 'dsh-llm'
import type { ChunkRun } from '../chunk-runs.ts'
import { SessionError, SessionErrorCode } from '../errors.ts'
import { RunLog } from '../run-log.ts'
import type { SessionEvent, SessionFileHeader, SessionListing } from '../types.ts'
import { checkBatch, checkStoredEvent } from './batch-check.ts'
import { eventBytesOver, eventTooLarge } from './event-size.ts'
import type { InlineTarget } from './inline-writer.ts'
import { DEFAULT_MAX_EVENT_BYTES, type LoadedLog, type SessionStorage } from './types.ts'

interface StoredSession {
  readonly header: SessionFileHeader
  /**
   * The events; chunk entries are kept in runs (see run-log.ts), shared with the session. While
   * `shared` is not -1, this is the log of the live session writing inline, of which the first
   * `shared` seqs are stored (the session commits to it, then has the seq stored).
   */
  log: RunLog
  shared: number
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
 * except chunk entries, which are kept in runs (the session's own runs when it writes inline); `load`
 * and `read` return them built, equal to the originals.
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
    this.sessions.set(header.sessionId, {
      header: Object.freeze({ ...header }),
      log: new RunLog(),
      shared: -1,
      holder: this,
    })
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
    const next = storedLength(stored)
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
    const log = ownLog(stored)
    for (let i = 0; i < batch.length; i++) log.add(batch[i] as SessionEvent)
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
    return new MemoryInlineTarget(this, this.require(sessionId), sessionId)
  }

  /**
   * Reads the whole session and checks each event against the event catalog as every backend's load
   * does: `UNKNOWN_EVENT_TYPE` for a type no longer defined, `CORRUPT_LOG` for one its schema refuses.
   */
  async load(sessionId: SessionId): Promise<LoadedLog> {
    const stored = this.require(sessionId)
    const events: SessionEvent[] = []
    const log = stored.log
    const length = storedLength(stored)
    for (let seq = 0; seq < length; seq++) {
      const event = log.at(seq) as SessionEvent
      checkStoredEvent(sessionId, event, seq)
      events.push(event)
    }
    return { header: stored.header, events, report: { repairedEvents: 0 } }
  }

  async *read(sessionId: SessionId, fromSeq: number): AsyncIterable<SessionEvent> {
    const stored = this.require(sessionId)
    const log = stored.log
    for (let seq = Math.max(0, fromSeq); seq < storedLength(stored); seq++) {
      const event = log.at(seq)
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
    const log = stored.log
    const length = storedLength(stored)
    while (found < events.length && expectedSeq + found < length) {
      const have = log.at(expectedSeq + found)
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

/** How many seqs of `stored` are stored. */
function storedLength(stored: StoredSession): number {
  return stored.shared === -1 ? stored.log.length : stored.shared
}

/**
 * The storage's own log of `stored`, to add to: a log shared with a session is first replaced by a
 * copy of its stored prefix (sharing its runs), so nothing the session holds unstored is kept.
 */
function ownLog(stored: StoredSession): RunLog {
  if (stored.shared !== -1) {
    stored.log = stored.log.prefix(stored.shared)
    stored.shared = -1
  }
  return stored.log
}

/**
 * One session's inline appends to a `MemoryStorage` (an object with methods rather than closures: one
 * is kept per live session). An empty session's log is lent to the session, whose appends then only
 * count what is stored.
 */
class MemoryInlineTarget implements InlineTarget {
  readonly log: RunLog | undefined

  constructor(
    private readonly storage: MemoryStorage,
    private readonly stored: StoredSession,
    private readonly sessionId: SessionId,
  ) {
    if (stored.log.length === 0 && stored.shared === -1) {
      this.log = stored.log
      stored.shared = 0
    }
  }

  append(event: SessionEvent): void {
    this.check(event.type, event.seq)
    if (this.sharing()) this.stored.shared++
    else ownLog(this.stored).add(event)
  }

  appendChunk(run: ChunkRun, seq: number): void {
    this.check('assistant/chunk', seq)
    if (this.sharing()) this.stored.shared++
    else ownLog(this.stored).addShared(run, seq)
  }

  /** Whether the storage still keeps this session's events in the log it lent it. */
  private sharing(): boolean {
    return this.log !== undefined && this.stored.log === this.log && this.stored.shared >= 0
  }

  private check(type: string, seq: number): void {
    const { stored, sessionId } = this
    if (stored.holder !== this.storage) {
      throw new SessionError(
        SessionErrorCode.LOCKED,
        `session ${sessionId}: append without holding the write lease`,
        { sessionId },
      )
    }
    const index = storedLength(stored)
    if (seq !== index) {
      throw new SessionError(
        SessionErrorCode.SEQ_MISMATCH,
        `session ${sessionId}: event ${type} has seq ${seq}, but the next seq is ${index}`,
        { sessionId, seq, eventType: type },
      )
    }
  }
}
