/**
 * The in-memory backend: the default storage of `Sessions`, and the reference for what the seam
 * promises (leases within the instance, seq checks on every batch).
 */
import type { SessionId } from 'dsh-llm'
import { SessionError } from '../errors.ts'
import type { SessionEvent, SessionFileHeader } from '../types.ts'
import type { LoadedLog, SessionStorage } from './types.ts'

interface StoredSession {
  readonly header: SessionFileHeader
  readonly events: SessionEvent[]
  leased: boolean
}

/**
 * Keeps sessions in process memory; nothing survives the process. Leases are enforced within this
 * instance: a second `create`/`acquire` of a leased session is refused with `LOCKED`, and so is an
 * `appendBatch` without the lease. Events are stored as given (committed events are frozen).
 */
export class MemoryStorage implements SessionStorage {
  private readonly sessions = new Map<string, StoredSession>()

  async create(header: SessionFileHeader): Promise<void> {
    if (this.sessions.has(header.sessionId)) {
      throw new SessionError('ALREADY_EXISTS', `session ${header.sessionId} already exists`, {
        sessionId: header.sessionId,
      })
    }
    this.sessions.set(header.sessionId, { header: Object.freeze({ ...header }), events: [], leased: true })
  }

  async acquire(sessionId: SessionId): Promise<void> {
    const stored = this.require(sessionId)
    if (stored.leased) {
      throw new SessionError('LOCKED', `session ${sessionId} is held by another writer`, { sessionId })
    }
    stored.leased = true
  }

  async appendBatch(
    sessionId: SessionId,
    events: readonly SessionEvent[],
    expectedSeq: number,
  ): Promise<void> {
    const stored = this.require(sessionId)
    if (!stored.leased) {
      throw new SessionError('LOCKED', `session ${sessionId}: append without holding the write lease`, {
        sessionId,
      })
    }
    if (expectedSeq !== stored.events.length) {
      throw new SessionError(
        'SEQ_MISMATCH',
        `session ${sessionId}: batch expected at seq ${expectedSeq} but the next seq is ${stored.events.length}`,
        { sessionId, seq: expectedSeq },
      )
    }
    events.forEach((event, i) => {
      if (event.seq !== expectedSeq + i) {
        throw new SessionError(
          'SEQ_MISMATCH',
          `session ${sessionId}: batch event ${i} has seq ${event.seq}, expected ${expectedSeq + i}`,
          { sessionId, seq: event.seq, eventType: event.type },
        )
      }
    })
    for (const event of events) stored.events.push(event)
  }

  async load(sessionId: SessionId): Promise<LoadedLog> {
    const stored = this.require(sessionId)
    return { header: stored.header, events: stored.events.slice(), report: { repairedEvents: 0 } }
  }

  async *read(sessionId: SessionId, fromSeq: number): AsyncIterable<SessionEvent> {
    const stored = this.require(sessionId)
    for (let seq = Math.max(0, fromSeq); seq < stored.events.length; seq++) {
      const event = stored.events[seq]
      if (event !== undefined) yield event
    }
  }

  async list(): Promise<readonly SessionFileHeader[]> {
    return [...this.sessions.values()].map((stored) => stored.header)
  }

  async release(sessionId: SessionId): Promise<void> {
    const stored = this.sessions.get(sessionId)
    if (stored !== undefined) stored.leased = false
  }

  private require(sessionId: SessionId): StoredSession {
    const stored = this.sessions.get(sessionId)
    if (stored === undefined)
      throw new SessionError('NOT_FOUND', `no stored session ${sessionId}`, { sessionId })
    return stored
  }
}
