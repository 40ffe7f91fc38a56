/**
 * The live session: one append-only log with its cached folds (enclosure, surface, header) and the
 * append pipeline snapshot → schema → enclosure → surface → guards → commit → persist → notify.
 */
import { deepFreeze, type Message, type SessionId, type StreamChunk } from 'dsh-llm'
import { isPlainChunkData, materializeChunk } from './chunk-runs.ts'
import {
  type ChunkData,
  chunkBound,
  chunkEstimate,
  isOrdinal,
  snapshotChunk,
  snapshotChunkData,
} from './chunk-snapshot.ts'
import { SurfaceFold, trackSurfaceFold } from './derive.ts'
import { EnclosureTracker } from './enclosure.ts'
import { SessionError } from './errors.ts'
import { EventLog } from './event-log.ts'
import { isSurfaceMeta } from './fast-payloads.ts'
import { headerStateOf } from './header.ts'
import { surfaceMetaSchema } from './payload-schemas.ts'
import { checkPayload, checkSchema, requireEventDefinition } from './schemas.ts'
import { snapshotJson } from './snapshot.ts'
import { assertEventSize, chunkSizeBudget } from './storage/event-size.ts'
import type { EventWriter } from './storage/event-writer.ts'
import type {
  AppendGuard,
  HeaderState,
  HistoryView,
  LoadReport,
  OpenTurnState,
  Session,
  SessionChunkListener,
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
  /** Tells chunk listeners about a committed chunk entry; must contain listener errors. */
  readonly notifyChunk: SessionChunkListener
  /** The per-event size limit in serialized bytes, checked before any guard runs. */
  readonly maxEventBytes: number
  /** The pre-commit checks currently registered, in order (an array the host replaces on change). */
  guards(): readonly AppendGuard[]
  /**
   * The clock for `time` (epoch ms). `reading`, a `Date.now()` value the caller just took, stands
   * for the clock when the store's clock is `Date.now` (one clock read per chunk, not two).
   */
  now(reading?: number): number
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
  private readonly log: EventLog
  private readonly enclosure = new EnclosureTracker()
  private readonly surface = new SurfaceFold()
  private readonly host: SessionHost
  private readonly writer: EventWriter | undefined
  private header: HeaderState | undefined
  /** While an append runs: its type, seq and phase (re-entrant appends are refused naming them). */
  private busyType: string | undefined
  private busySeq = 0
  private busyPhase: 'checking' | 'notifying' = 'checking'
  private closed = false

  constructor(init: LiveSessionInit) {
    this.id = init.id
    if (init.parent !== undefined) this.parent = init.parent
    if (init.loadReport !== undefined) this.loadReport = init.loadReport
    this.host = init.host
    this.writer = init.writer
    this.log = new EventLog(init.writer?.sharedLog)
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

  nonChunkSeq(seq: number): number {
    if (!Number.isInteger(seq) || seq < 0) {
      throw new RangeError(`session ${this.id}: nonChunkSeq needs a non-negative integer seq, got ${seq}`)
    }
    return this.log.nonChunkSeq(seq)
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
    this.enter(type, seq)
    try {
      if (type === 'assistant/chunk' && surface === undefined) {
        // The common chunk payloads: copied and checked in one hand-written pass, else the general path.
        const fast = snapshotChunkData(data)
        if (fast !== undefined) {
          this.commitChunk(fast.turn, fast.step, fast.chunk, seq, chunkBound(fast.chunk))
          return this.log.at(seq) as SessionEventOf<K>
        }
      }
      return (this.appendGeneral(type, data, surface, seq) ?? this.log.at(seq)) as SessionEventOf<K>
    } finally {
      this.busyType = undefined
    }
  }

  appendChunk(turn: number, step: number, chunk: StreamChunk, now?: number): number {
    const seq = this.log.length
    this.enter('assistant/chunk', seq)
    try {
      const copy = isOrdinal(turn) && isOrdinal(step) ? snapshotChunk(chunk) : undefined
      const reading = Number.isSafeInteger(now) ? now : undefined
      if (copy !== undefined) this.commitChunk(turn, step, copy, seq, chunkBound(copy), reading)
      else this.appendGeneral('assistant/chunk', { turn, step, chunk }, undefined, seq)
      return seq
    } finally {
      this.busyType = undefined
    }
  }

  /** Refuses an append to a closed session or from inside another append; else marks one running. */
  private enter(type: string, seq: number): void {
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
  }

  /**
   * Commits a checked, frozen chunk into the step's open run: enclosure, size (`bound`: an upper
   * bound of its payload's JSON bytes, or -1 to measure the general way), guards (their `chunk` hook,
   * else a built candidate), the log, the writer, then the chunk listeners. No event is built unless
   * the size needs measuring or a guard has no `chunk` hook. `reading`: see `SessionHost.now`.
   */
  private commitChunk(
    turn: number,
    step: number,
    chunk: StreamChunk,
    seq: number,
    bound: number,
    reading?: number,
  ): void {
    this.enclosure.checkChunk(turn, step, seq)
    const time = this.host.now(reading)
    let candidate: SessionEvent | undefined
    if (bound < 0 || bound > chunkSizeBudget(this.host.maxEventBytes)) {
      candidate = materializeChunk(seq, time, turn, step, chunk)
      assertEventSize(candidate, this.host.maxEventBytes, this.id)
    }
    const guards = this.host.guards()
    for (let i = 0; i < guards.length; i++) {
      const guard = guards[i] as AppendGuard
      if (guard.chunk !== undefined) {
        guard.chunk(this, seq, turn, step, chunk)
        continue
      }
      candidate ??= materializeChunk(seq, time, turn, step, chunk)
      guard(this, candidate)
    }
    // A known bound means `chunk` is a copy `snapshotChunk` built: a canonical form.
    const run = this.log.addChunk(time, turn, step, chunk, bound >= 0)
    this.writer?.enqueueChunk(run, seq, chunkEstimate(chunk))
    this.busyPhase = 'notifying'
    this.host.notifyChunk(this, seq, time, turn, step, chunk)
  }

  /**
   * The general append path: snapshot, schema, then a plain chunk payload goes to `commitChunk`
   * (returning `undefined`); any other event is built, checked (enclosure, surface, size, guards),
   * committed, enqueued and announced, and returned.
   */
  private appendGeneral(
    type: string,
    data: unknown,
    surface: SurfaceMeta | undefined,
    seq: number,
  ): SessionEvent | undefined {
    const definition = requireEventDefinition(type, seq)
    const payload = snapshotJson(data, type)
    checkPayload(definition, payload, type, seq)
    const isChunk = type === 'assistant/chunk'
    if (isChunk && surface === undefined && isPlainChunkData(payload as ChunkData)) {
      const { turn, step, chunk } = payload as ChunkData
      this.commitChunk(turn, step, chunk, seq, -1)
      return undefined
    }
    this.enclosure.check(type, payload, seq, definition.placement)
    const event = this.build(type, payload, surface, seq)
    assertEventSize(event, this.host.maxEventBytes, this.id)
    const guards = this.host.guards()
    for (let i = 0; i < guards.length; i++) (guards[i] as AppendGuard)(this, event)
    this.commit(event)
    this.writer?.enqueue(event)
    this.busyPhase = 'notifying'
    if (isChunk) {
      const { turn, step, chunk } = event.data as ChunkData
      this.host.notifyChunk(this, seq, event.time, turn, step, chunk)
    } else this.host.notify(this, event)
    return event
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

  /** The frozen envelope of a checked payload, with its surface metadata checked. */
  private build(type: string, payload: unknown, surface: SurfaceMeta | undefined, seq: number): SessionEvent {
    const time = this.host.now()
    if (surface === undefined) return Object.freeze({ type, seq, time, data: payload }) as SessionEvent
    const meta = snapshotJson(surface, type, 'surface')
    if (!isSurfaceMeta(meta)) checkSchema(surfaceMetaSchema, meta, type, seq, 'surface')
    if (meta.op === 'replace') this.surface.derive(this.log.raw)
    this.surface.checkSurface(type, payload, meta, seq)
    return Object.freeze({ type, seq, time, data: payload, surface: meta }) as SessionEvent
  }

  private commit(event: SessionEvent): void {
    this.log.add(event)
    this.enclosure.apply(event.type, event.data)
    if (event.type === 'request/header') this.header = headerStateOf(event)
    else if (event.type === 'turn/end') this.surface.settle()
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
        ? `from inside the ${busyType === 'assistant/chunk' ? 'session/chunk' : 'session/event'} notification of ${busyType} at seq ${this.busySeq}`
        : `while ${busyType} at seq ${this.busySeq} is being checked`
    throw new SessionError('REENTRANT_APPEND', `session ${this.id}: cannot append ${type} ${where}`, {
      sessionId: this.id,
      eventType: type,
    })
  }
}
