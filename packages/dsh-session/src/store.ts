/**
 * `ctx.sessions`: creates, opens, forks and closes live sessions over a storage backend. The same
 * plugin provides `ctx.sessionProjections`, so `await app.plugin(Sessions)` gives both services.
 */
import { type Context, Service } from 'cordis'
import { emitContained, eventBus, newSessionId, redact, type SessionId, type StreamChunk } from 'dsh-llm'
import { SessionError, SessionErrorCode } from './errors.ts'
import { forkSeed } from './fork.ts'
import { SessionProjectionRegistry } from './projections.ts'
import { packageClosers, type RepairEvent, repairClosers } from './repair-closers.ts'
import { LiveSession, type SessionHost } from './session.ts'
import type { EventWriter } from './storage/event-writer.ts'
import { bothFailures, failureOf, withCleanupFailure } from './storage/failures.ts'
import { InlineWriter } from './storage/inline-writer.ts'
import { SESSION_FORMAT_VERSION } from './storage/jsonl/codec.ts'
import { MemoryStorage } from './storage/memory.ts'
import { DEFAULT_MAX_EVENT_BYTES, type SessionStorage } from './storage/types.ts'
import { DEFAULT_HIGH_WATER_MARK, SessionWriter, type SessionWriterOptions } from './storage/writer.ts'
import type {
  AppendGuard,
  ExposedSession,
  LoadReport,
  Session,
  SessionChunkListener,
  SessionEvent,
  SessionEventInput,
  SessionEventListener,
  SessionFileHeader,
  SessionListing,
  SessionParent,
  SessionStore,
} from './types.ts'

declare module 'cordis' {
  interface Context {
    sessions: Sessions
  }
  interface Events {
    /** emit (contained): a session became live in this process (created, opened or forked). */
    'session/created'(session: Session): void
    /**
     * emit (contained): an event was committed to a live session, `assistant/chunk` entries excepted
     * (`session/chunk` carries those). Appending from here throws.
     */
    'session/event'(session: Session, event: SessionEvent): void
    /**
     * emit (contained): a chunk entry was committed to a live session at `seq`, as its parts (no
     * event; `session.eventAt(seq)` builds it). Appending from here throws.
     */
    'session/chunk'(
      session: Session,
      seq: number,
      time: number,
      turn: number,
      step: number,
      chunk: StreamChunk,
    ): void
    /** emit (contained): a live session was closed and its lease released. */
    'session/disposed'(session: Session): void
  }
}

/** Configuration of the `Sessions` plugin. */
export interface SessionsConfig {
  /** The backend; defaults to a fresh `MemoryStorage`. */
  readonly storage?: SessionStorage
  /** The clock for event `time` (epoch ms); defaults to `Date.now`. */
  readonly clock?: () => number
  /**
   * The per-event size limit in serialized bytes: an append over it throws `EVENT_TOO_LARGE` before it
   * commits. Defaults to the storage's `maxEventBytes`, else 16 MiB; never above the storage's limit.
   */
  readonly maxEventBytes?: number
  /**
   * Bytes (estimated) of unsynced events per session above which `session.writable()` waits; default
   * 8 MiB. Producers that append in bulk await it to keep memory bounded behind a slow backend.
   */
  readonly highWaterMark?: number
  /**
   * How long (ms) a session's background write waits after an unflushed append, so that a barrier
   * arriving meanwhile carries everything in one write and sync; default 2 (`DEFAULT_COMMIT_DELAY_MS`).
   */
  readonly commitDelayMs?: number
}

/**
 * The session store service (`ctx.sessions`), which also provides `ctx.sessionProjections`.
 * Disposing the plugin closes every live session (flush, then release).
 */
export class Sessions extends Service implements SessionStore {
  /** The storage backend in use. */
  readonly storage: SessionStorage
  /** The projection registry this plugin provides as `ctx.sessionProjections`. */
  readonly projections: SessionProjectionRegistry
  /** The per-event size limit every append is checked against before it commits. */
  readonly maxEventBytes: number
  private readonly live = new Map<string, LiveSession>()
  /** Opens in flight, so a second `open` of the same id joins the first instead of racing it. */
  private readonly opening = new Map<string, Promise<Session>>()
  /** Pre-commit checks, in registration order; replaced (never mutated) on change, like `eventListeners`. */
  private appendGuards: readonly AppendGuard[] = []
  /** `onEvent` listeners; replaced (never mutated) on change, so notifying needs no copy. */
  private eventListeners: readonly SessionEventListener[] = []
  /** `onChunk` listeners; replaced (never mutated) on change. */
  private chunkListeners: readonly SessionChunkListener[] = []
  private readonly host: SessionHost
  private readonly clock: () => number
  private readonly writerOptions: SessionWriterOptions
  /** Session files already warned about as readable by others (each is warned about once). */
  private readonly warnedExposed = new Set<string>()
  /** While repair closers are appended: the time they carry, taken from the log (never the clock). */
  private repairTime: number | undefined
  private readonly home: Context

  constructor(ctx: Context, config: SessionsConfig = {}) {
    super(ctx, 'sessions')
    this.home = ctx
    this.storage = config.storage ?? new MemoryStorage()
    this.clock = config.clock ?? Date.now
    this.writerOptions = {
      ...(config.highWaterMark === undefined ? {} : { highWaterMark: config.highWaterMark }),
      ...(config.commitDelayMs === undefined ? {} : { commitDelayMs: config.commitDelayMs }),
    }
    const storageLimit = this.storage.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES
    const limit = Math.min(config.maxEventBytes ?? storageLimit, storageLimit)
    this.maxEventBytes = limit
    this.projections = new SessionProjectionRegistry(ctx)
    // Resolved once: the per-event notification must not pay cordis's tracing proxies.
    const bus = eventBus(ctx)
    this.host = {
      notify: (session, event) => {
        this.projections.handleEvent(session, event)
        if (bus.has('session/event')) bus.emit('session/event', [session, event])
        const listeners = this.eventListeners
        for (let i = 0; i < listeners.length; i++) {
          try {
            listeners[i]?.(session, event)
          } catch (error) {
            const text = error instanceof Error ? (error.stack ?? error.message) : String(error)
            this.home
              .logger('dsh')
              .warn(`session event listener threw at ${event.type} seq ${event.seq}: %s`, redact(text))
          }
        }
      },
      notifyChunk: (session, seq, time, turn, step, chunk) => {
        if (bus.has('session/chunk')) bus.emit('session/chunk', [session, seq, time, turn, step, chunk])
        const listeners = this.chunkListeners
        for (let i = 0; i < listeners.length; i++) {
          try {
            listeners[i]?.(session, seq, time, turn, step, chunk)
          } catch (error) {
            const text = error instanceof Error ? (error.stack ?? error.message) : String(error)
            this.home
              .logger('dsh')
              .warn(`session chunk listener threw at assistant/chunk seq ${seq}: %s`, redact(text))
          }
        }
      },
      // Checked by the session before any guard: an oversized event is refused before it commits.
      maxEventBytes: limit,
      guards: () => this.appendGuards,
      now: (reading) =>
        this.repairTime ?? (reading !== undefined && this.clock === Date.now ? reading : this.clock()),
    }
    ctx.effect(() => () => this.closeAll(), 'close live sessions')
  }

  /** Creates an empty session (id defaults to a fresh nanoid). Throws `ALREADY_EXISTS` for a taken id. */
  async create(options: { id?: SessionId } = {}): Promise<Session> {
    const id = options.id ?? newSessionId()
    await this.storage.create(this.header(id))
    return this.adopt(new LiveSession({ id, host: this.host, writer: this.writer(id, 0) }))
  }

  /** The live session `id` of this process, if any. */
  get(id: SessionId): Session | undefined {
    return this.live.get(id)
  }

  /**
   * Opens a stored session: takes its lease, loads it and appends the `repairClosers` (the
   * registered package closers, then `interruptedTurnClosers` if its last turn is open) through the
   * normal append path (timed like the last logged event, so a
   * repair is deterministic) and flushes them. Returns the live
   * session if it is already open here, and the same pending open to concurrent callers: one id has
   * at most one live session per store. Refuses (and releases the lease) on a load or repair error.
   */
  open(id: SessionId): Promise<Session> {
    const existing = this.live.get(id)
    if (existing !== undefined) return Promise.resolve(existing)
    const pending = this.opening.get(id)
    if (pending !== undefined) return pending
    const opening = this.openStored(id).finally(() => this.opening.delete(id))
    this.opening.set(id, opening)
    return opening
  }

  private async openStored(id: SessionId): Promise<Session> {
    await this.storage.acquire(id)
    let session: LiveSession | undefined
    try {
      const loaded = await this.storage.load(id)
      const writer = this.writer(id, loaded.events.length)
      session = new LiveSession({
        id,
        parent: loaded.header.parent,
        history: loaded.events,
        host: this.host,
        writer,
      })
      const closers = repairClosers(session.events)
      // Closers carry the time of the last logged event, so repairing one file twice writes the same bytes.
      this.repairTime = session.events[session.events.length - 1]?.time
      try {
        for (const closer of closers) appendRepair(session, closer)
      } finally {
        this.repairTime = undefined
      }
      if (closers.length > 0) await session.flush()
      session.loadReport = Object.freeze({ ...loaded.report, repairedEvents: closers.length })
      this.reportMended(id, session.loadReport)
    } catch (error) {
      session?.markClosed()
      throw withCleanupFailure(
        error,
        await failureOf(this.storage.release(id)),
        `releasing the lease of ${id}`,
      )
    }
    return this.adopt(session)
  }

  /**
   * Warns (logger `dsh`) when opening a session cut a torn tail or committed repair closers, and
   * (once per file) when its file is readable by others.
   */
  private reportMended(id: SessionId, report: LoadReport): void {
    const logger = this.home.logger('dsh')
    if (report.exposed !== undefined) this.warnExposed([report.exposed])
    if (report.truncatedTail !== undefined) {
      const { line, bytes } = report.truncatedTail
      logger.warn(
        `session ${id}: cut a torn final line (line ${line}, ${bytes} bytes) that was never acknowledged`,
      )
    }
    if (report.repairedEvents > 0) {
      logger.warn(`session ${id}: closed an interrupted turn with ${report.repairedEvents} repair events`)
    }
  }

  /**
   * Headers of every stored session, and the stored entries that could not be read (never thrown).
   * Warns (logger `dsh`, once per file) about sessions others can read (`exposed`).
   */
  async list(): Promise<SessionListing> {
    const listing = await this.storage.list()
    if (listing.exposed !== undefined) this.warnExposed(listing.exposed)
    return listing
  }

  /** One warning per session file readable by others, the first time this store finds it. */
  private warnExposed(found: readonly ExposedSession[]): void {
    for (const { path, mode } of found) {
      if (this.warnedExposed.has(path)) continue
      this.warnedExposed.add(path)
      this.home
        .logger('dsh')
        .warn(
          `session file ${path} is readable by other users (mode 0${mode.toString(8)}); run chmod 600 on it (sessions hold prompts, files and tool output)`,
        )
    }
  }

  /**
   * Forks `source` at `boundarySeq`: a new session whose header records `parent {sessionId,
   * seedLength}`, seeded with `source.events[0, boundarySeq)` (same seqs), then `session/end-seed`, then
   * what the registered package closers return for work the seed leaves open, all flushed before it resolves. Throws `INVALID_FORK` for a boundary out of range or inside an
   * open turn.
   */
  async fork(source: Session, boundarySeq: number): Promise<Session> {
    const seed = forkSeed(source, boundarySeq)
    const id = newSessionId()
    const parent: SessionParent = Object.freeze({ sessionId: source.id, seedLength: boundarySeq })
    await this.storage.create(this.header(id, parent))
    const writer = this.writer(id, 0)
    const session = new LiveSession({ id, parent, history: seed, host: this.host, writer })
    for (const event of seed) writer.enqueue(event)
    session.append('session/end-seed', {})
    // A package's work the seed leaves open (a compaction between its start and end) is closed here.
    for (const closer of packageClosers(session.events)) appendRepair(session, closer)
    await session.flush()
    return this.adopt(session)
  }

  /** Durability barrier: resolves when everything appended to `session` so far is durable. */
  flush(session: Session): Promise<void> {
    return session.flush()
  }

  /**
   * Flushes `session`, marks it closed (later appends throw `CLOSED`), releases its lease, forgets it
   * and emits `session/disposed`. Every step runs even when an earlier one fails, so no lease is left
   * on any path; a failure then rejects as `CLOSE_FAILED` with the original error as `cause` (an
   * `AggregateError` of the flush's and the release's failures when both failed)
   * (events not yet durable were never acknowledged by `flush`). Closing again is a no-op.
   */
  async close(session: Session): Promise<void> {
    const live = this.live.get(session.id)
    if (live === undefined || live.isClosed) return
    let failure: unknown
    await live.flush().catch((error: unknown) => {
      failure = error
    })
    live.markClosed()
    this.live.delete(session.id)
    await this.storage.release(session.id).catch((error: unknown) => {
      failure = failure === undefined ? error : bothFailures(failure, error, `closing session ${session.id}`)
    })
    emitContained(this.home, 'session/disposed', [live])
    if (failure !== undefined) {
      const why = failure instanceof Error ? failure.message : String(failure)
      throw new SessionError(
        SessionErrorCode.CLOSE_FAILED,
        `session ${session.id}: closing failed (the session is closed and its lease released): ${why}`,
        { sessionId: session.id, seq: live.seq },
        { cause: failure },
      )
    }
  }

  /**
   * Calls `listener(session, event)` after each event committed to any live session of this store
   * (chunk entries excepted: `onChunk`), after the `session/event` listeners, as an effect of the calling fiber (removed with it, or by
   * the returned disposer). The cheap form of `ctx.on('session/event')` for per-event work: a plain
   * call, without cordis's tracing of the listener and its arguments. A throwing listener is logged
   * (logger `dsh`) and does not stop the others; appending from it throws `REENTRANT_APPEND`.
   */
  onEvent(listener: SessionEventListener): () => void {
    return this.ctx.effect(() => {
      this.eventListeners = [...this.eventListeners, listener]
      return () => {
        this.eventListeners = this.eventListeners.filter((x) => x !== listener)
      }
    }, 'session event listener')
  }

  /**
   * Calls `listener(session, seq, time, turn, step, chunk)` after each chunk entry committed to any
   * live session of this store, after the `session/chunk` listeners, as an effect of the calling
   * fiber (removed with it, or by the returned disposer). The live channel of chunks: no event is
   * built for it (`session.eventAt(seq)` builds one). A throwing listener is logged (logger `dsh`)
   * and does not stop the others; appending from it throws `REENTRANT_APPEND`.
   */
  onChunk(listener: SessionChunkListener): () => void {
    return this.ctx.effect(() => {
      this.chunkListeners = [...this.chunkListeners, listener]
      return () => {
        this.chunkListeners = this.chunkListeners.filter((x) => x !== listener)
      }
    }, 'session chunk listener')
  }

  /**
   * Adds a pre-commit check for every session, as an effect of the calling fiber. A check with a
   * `chunk` hook gets chunk entries through it, without an event (see `AppendGuard`).
   */
  guard(check: AppendGuard): () => void {
    return this.ctx.effect(() => {
      if (!this.appendGuards.includes(check)) this.appendGuards = [...this.appendGuards, check]
      return () => {
        this.appendGuards = this.appendGuards.filter((x) => x !== check)
      }
    }, 'session append guard')
  }

  /**
   * The writer of a session whose next event has seq `nextSeq`: inline over an unmodified
   * `MemoryStorage` (nothing to batch in process), batched (`SessionWriter`) over anything else.
   */
  private writer(id: SessionId, nextSeq: number): EventWriter {
    const storage = this.storage
    if (storage instanceof MemoryStorage && storage.writesInline) {
      const mark = this.writerOptions.highWaterMark ?? DEFAULT_HIGH_WATER_MARK
      return new InlineWriter(storage.inlineTarget(id), id, nextSeq, mark)
    }
    return new SessionWriter(storage, id, nextSeq, this.writerOptions)
  }

  private header(sessionId: SessionId, parent?: SessionParent): SessionFileHeader {
    const header = {
      format: 'dsh-session',
      version: SESSION_FORMAT_VERSION,
      sessionId,
      createdAt: this.clock(),
    }
    return Object.freeze(parent === undefined ? header : { ...header, parent }) as SessionFileHeader
  }

  private adopt(session: LiveSession): Session {
    this.live.set(session.id, session)
    emitContained(this.home, 'session/created', [session])
    return session
  }

  private async closeAll(): Promise<void> {
    for (const session of [...this.live.values()]) {
      try {
        await this.close(session)
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error)
        this.home.logger('dsh').warn(`closing session ${session.id} failed: %s`, redact(text))
      }
    }
  }
}

/** Appends one repair event, with its surface metadata when it has some. */
function appendRepair(session: Session, event: RepairEvent): SessionEvent {
  if (event.surface === undefined) return appendInput(session, event)
  const append = session.append as (
    type: string,
    data: unknown,
    surface: RepairEvent['surface'],
  ) => SessionEvent
  return append.call(session, event.type, event.data, event.surface)
}

/** Appends a `{type, data}` pair (the union form) to `session`. */
export function appendInput(session: Session, input: SessionEventInput): SessionEvent {
  // `append` is generic over one event type; a union input cannot name a single K, so widen the call.
  const append = session.append as (type: string, data: unknown) => SessionEvent
  return append.call(session, input.type, input.data)
}
