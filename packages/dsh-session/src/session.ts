/**
 * The live session: one append-only log with its cached folds (enclosure, surface, header) and the
 * append pipeline snapshot → schema → enclosure → surface → guards → commit → persist → notify.
 */
import { deepFreeze, type Message, type SessionId } from 'dsh-llm'
import { type ChunkData, chunkDataBound, chunkDataEstimate, snapshotChunkData } from './chunk-snapshot.ts'
import { SurfaceFold, trackSurfaceFold } from './derive.ts'
import { EnclosureTracker } from './enclosure.ts'
import { SessionError } from './errors.ts'
import { EventLog } from './event-log.ts'
import { isSurfaceMeta } from './fast-payloads.ts'
import { headerStateOf } from './header.ts'
import { surfaceMetaSchema } from './payload-schemas.ts'
import { checkPayload, checkSchema, requireEventDefinition } from './schemas.ts'
import { snapshotJson } from './snapshot.ts'
import { assertEventSize, assertEventSizeWithin } from './storage/event-size.ts'
import type { EventWriter } from './storage/event-writer.ts'
import type {
  AppendGuard,
  HeaderState,
  HistoryView,
  LoadReport,
  OpenTurnState,
  Session,
  SessionEvent,
  SessionEventMap,
  SessionEventOf,
  SessionEventType,
  SessionParent,
  SurfaceMeta,
} from './types.ts'

/** What a live session needs from its store. */
export interface SessionHost {
  /** Tells `session/event` listeners about a committed event; must contain listener errors. */
  notify(session: Session, event: SessionEvent): void
  /** The per-event size limit in serialized bytes, checked before any guard runs. */
  readonly maxEventBytes: number
  /** The pre-commit checks currently registered, in order (an array the host replaces on change). */
  guards(): readonly AppendGuard[]
  /** The clock for `time` (epoch ms). */
  now(): number
}

/** How a live session starts: its identity, history already committed (loaded or seeded), its writer. */
export interface LiveSessionInit {
  readonly id: SessionId
  readonly parent?: SessionParent | undefined
  /** Set by the store once a session opened from storage is loaded and repaired. */
  readonly loadReport?: LoadReport | undefined
  /** Committed events, seq 0 upward; checked for contiguity, enclosure and surface fit. */
  readonly history?: readonly SessionEvent[]
  readonly host: SessionHost
  readonly writer?: EventWriter
}

/** The `Session` implementation behind `ctx.sessions`. */
export class LiveSession implements Session {
  readonly id: SessionId
  readonly parent?: SessionParent
  loadReport?: LoadReport
  private readonly log = new EventLog()
  private readonly enclosure = new EnclosureTracker()
  private readonly surface = new SurfaceFold()
  private readonly host: SessionHost
  private readonly writer: EventWriter | undefined
  private header: HeaderState | undefined
  /** While an append runs: its type, seq and phase (re-entrant appends are refused naming them). */
  private busyType: string | undefined
  private busySeq = 0
  private busyPhase: 'checking' | 'notifying' = 'checking'
  /** The event `prepare` just built is a chunk whose payload `snapshotChunkData` built. */
  private canonical = false
  private closed = false

  constructor(init: LiveSessionInit) {
    this.id = init.id
    if (init.parent !== undefined) this.parent = init.parent
    if (init.loadReport !== undefined) this.loadReport = init.loadReport
    this.host = init.host
    this.writer = init.writer
    trackSurfaceFold(this, this.surface)
    for (const event of init.history ?? []) this.adopt(event)
    this.surface.derive(this.log.raw)
  }

  get events(): readonly SessionEvent[] {
    return this.log.snapshot()
  }

  eventAt(seq: number): SessionEvent | undefined {
    return this.log.at(seq)
  }

  eventTypeAt(seq: number): SessionEventType | undefined {
    return this.log.typeAt(seq)
  }

  get seq(): number {
    return this.log.length
  }

  /** True once the store closed this session; appends are then refused with `CLOSED`. */
  get isClosed(): boolean {
    return this.closed
  }

  append<K extends SessionEventType>(
    type: K,
    data: SessionEventMap[K],
    surface?: SurfaceMeta,
  ): SessionEventOf<K> {
    const seq = this.log.length
    if (this.closed) {
      throw new SessionError('CLOSED', `session ${this.id} is closed; cannot append ${type}`, {
        sessionId: this.id,
        eventType: type,
        seq,
      })
    }
    if (this.busyType !== undefined) this.refuseReentrant(type, this.busyType)
    // Fields, not a per-append object: the append path allocates only what it commits.
    this.busyType = type
    this.busySeq = seq
    this.busyPhase = 'checking'
    try {
      const event = this.prepare(type, data, surface, seq)
      const canonical = this.canonical
      // The size limit first (`EVENT_TOO_LARGE`); a chunk built by the fast path is measured by its
      // strings, for the limit and for the writer's queue alike.
      if (canonical)
        assertEventSizeWithin(
          event,
          chunkDataBound(event.data as ChunkData),
          this.host.maxEventBytes,
          this.id,
        )
      else assertEventSize(event, this.host.maxEventBytes, this.id)
      const guards = this.host.guards()
      for (let i = 0; i < guards.length; i++) (guards[i] as AppendGuard)(this, event)
      this.commit(event, canonical)
      this.writer?.enqueue(event, canonical ? chunkDataEstimate(event.data as ChunkData) : -1)
      this.busyPhase = 'notifying'
      this.host.notify(this, event)
      return event as SessionEventOf<K>
    } finally {
      this.busyType = undefined
    }
  }

  deriveMessages(): readonly Message[] {
    return this.surface.derive(this.log.raw)
  }

  deriveHistory(): HistoryView {
    return this.surface.history(this.log.raw)
  }

  requestHeader(): HeaderState | undefined {
    return this.header
  }

  openTurn(): OpenTurnState | undefined {
    return this.enclosure.openTurn
  }

  lastTurn(): number {
    return this.enclosure.lastTurn
  }

  flush(): Promise<void> {
    return this.writer === undefined ? Promise.resolve() : this.writer.flush()
  }

  isDurable(): boolean {
    return this.writer === undefined || this.writer.durableSeq === this.log.length
  }

  writable(): Promise<void> {
    return this.writer === undefined ? Promise.resolve() : this.writer.ready()
  }

  mustWait(): boolean {
    return this.writer?.overHighWaterMark === true
  }

  /** Marks the session closed (the store calls this after its final flush) and stops its writer's timer. */
  markClosed(): void {
    this.closed = true
    this.writer?.dispose()
  }

  private prepare(type: string, data: unknown, surface: SurfaceMeta | undefined, seq: number): SessionEvent {
    const definition = requireEventDefinition(type, seq)
    // The common chunk payloads: copied and checked in one hand-written pass, else the general path.
    const chunk = type === 'assistant/chunk' ? snapshotChunkData(data) : undefined
    this.canonical = chunk !== undefined
    let payload: unknown = chunk
    if (chunk !== undefined) this.enclosure.checkChunk(chunk.turn, chunk.step, seq)
    else {
      payload = snapshotJson(data, type)
      checkPayload(definition, payload, type, seq)
      this.enclosure.check(type, payload, seq, definition.placement)
    }
    const time = this.host.now()
    if (surface === undefined) return Object.freeze({ type, seq, time, data: payload }) as SessionEvent
    const meta = snapshotJson(surface, type, 'surface')
    if (!isSurfaceMeta(meta)) checkSchema(surfaceMetaSchema, meta, type, seq, 'surface')
    if (meta.op === 'replace') this.surface.derive(this.log.raw)
    this.surface.checkSurface(type, payload, meta, seq)
    return Object.freeze({ type, seq, time, data: payload, surface: meta }) as SessionEvent
  }

  private commit(event: SessionEvent, canonical = false): void {
    this.log.add(event, canonical)
    this.enclosure.apply(event.type, event.data)
    if (event.type === 'request/header') this.header = headerStateOf(event)
  }

  /** Takes one already-committed event into the log (history), checking seq and enclosure. */
  private adopt(event: SessionEvent): void {
    const seq = this.log.length
    if (event.seq !== seq) {
      throw new SessionError(
        'CORRUPT_LOG',
        `session ${this.id}: event ${event.type} has seq ${event.seq}, expected ${seq}`,
        {
          sessionId: this.id,
          eventType: event.type,
          seq,
        },
      )
    }
    this.enclosure.check(event.type, event.data, seq, requireEventDefinition(event.type, seq).placement)
    this.commit(deepFreeze(event))
  }

  private refuseReentrant(type: string, busyType: string): never {
    const where =
      this.busyPhase === 'notifying'
        ? `from inside the session/event notification of ${busyType} at seq ${this.busySeq}`
        : `while ${busyType} at seq ${this.busySeq} is being checked`
    throw new SessionError('REENTRANT_APPEND', `session ${this.id}: cannot append ${type} ${where}`, {
      sessionId: this.id,
      eventType: type,
    })
  }
}
