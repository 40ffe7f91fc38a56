/**
 * `ctx.sessionProjections`: keyed pure folds over session logs, built lazily over existing history
 * and kept current by `session/event`, readable for any session (no live agent needed). A fold sees
 * every event but `assistant/chunk` entries (which `session/event` does not carry either).
 */
import { type Context, Service } from 'cordis'
import { redact } from 'dsh-llm'
import { SessionError } from './errors.ts'
import type { ProjectionDefinition, Session, SessionEvent, SessionProjections } from './types.ts'

declare module 'cordis' {
  interface Context {
    sessionProjections: SessionProjectionRegistry
  }
}

type ChangeListener = (session: Session, state: unknown, event: SessionEvent) => void

interface ProjectionState {
  state: unknown
  /** Events below this seq are folded in. */
  upTo: number
  /** The error that stopped this fold (a throwing `apply` or a state failing its schema). */
  failure?: unknown
}

interface Registration {
  readonly definition: ProjectionDefinition<unknown>
  readonly states: WeakMap<Session, ProjectionState>
}

/**
 * The projection registry. A state changes when `apply` returns a different value (`!==`), so folds
 * must return the same state for events they ignore. The store feeds it each committed event before
 * any `session/event` listener runs, so listeners read current states. Provided by the `Sessions` plugin.
 */
export class SessionProjectionRegistry extends Service implements SessionProjections {
  private readonly registrations = new Map<string, Registration>()
  /** `registrations`' values, in order, replaced on change: the per-event loop walks it without an iterator. */
  private registered: readonly Registration[] = []
  private readonly listeners = new Map<string, Set<ChangeListener>>()
  private readonly home: Context

  constructor(ctx: Context) {
    super(ctx, 'sessionProjections')
    this.home = ctx
  }

  /**
   * Brings every built state of `session` up to and including `event`, reporting changes. The store
   * calls this for each committed event before `session/event` listeners run, so they read current
   * states. Never throws: a failing fold keeps its error for `get`.
   */
  handleEvent(session: Session, event: SessionEvent): void {
    this.advanceAll(session, event)
  }

  /**
   * Registers `definition` under its key as an effect of the calling fiber (removed when that fiber
   * is disposed, or by the returned disposer). Throws `DUPLICATE_PROJECTION` if the key is taken.
   */
  register<S>(definition: ProjectionDefinition<S>): () => void {
    const { key } = definition
    if (this.registrations.has(key)) {
      throw new SessionError('DUPLICATE_PROJECTION', `projection ${key} is already registered`)
    }
    const registration: Registration = {
      definition: definition as ProjectionDefinition<unknown>,
      states: new WeakMap(),
    }
    return this.ctx.effect(() => {
      this.registrations.set(key, registration)
      this.registered = [...this.registrations.values()]
      return () => {
        if (this.registrations.get(key) === registration) this.registrations.delete(key)
        this.registered = [...this.registrations.values()]
      }
    }, `projection ${key}`)
  }

  /**
   * The state of `key` for `session`: built on first read by folding the existing history, then
   * kept current. Throws `UNKNOWN_PROJECTION` for an unregistered key, and rethrows the error that
   * stopped the fold (e.g. an inbox `INVALID_SPLICE` naming its seq).
   */
  get<S>(session: Session, key: string): S {
    const registration = this.registrations.get(key)
    if (registration === undefined) {
      throw new SessionError('UNKNOWN_PROJECTION', `no projection registered under ${key}`)
    }
    const entry = this.entry(registration, session)
    this.advance(registration, session, entry, session.seq)
    if (entry.failure !== undefined) throw entry.failure
    return entry.state as S
  }

  /**
   * Calls `listener` after each change of `key`'s state for any session, with the event that caused
   * it. An effect of the calling fiber; a throwing listener is logged and does not stop the others.
   */
  onChanged<S>(key: string, listener: (session: Session, state: S, event: SessionEvent) => void): () => void {
    const callback = listener as ChangeListener
    return this.ctx.effect(() => {
      const set = this.listeners.get(key) ?? new Set<ChangeListener>()
      this.listeners.set(key, set)
      set.add(callback)
      return () => {
        set.delete(callback)
      }
    }, `projection ${key} listener`)
  }

  private advanceAll(session: Session, event: SessionEvent): void {
    const registered = this.registered
    for (let i = 0; i < registered.length; i++) {
      const registration = registered[i] as Registration
      const existing = registration.states.get(session)
      if (existing === undefined && (this.listeners.get(registration.definition.key)?.size ?? 0) === 0)
        continue
      const entry = existing ?? this.build(registration, session, event.seq)
      // The common case: the state is current up to this event, which is the one to fold next.
      if (entry.upTo === event.seq && entry.failure === undefined)
        this.fold(registration, session, entry, event)
      else this.advance(registration, session, entry, event.seq + 1)
    }
  }

  /** Folds `event` (the next one, at `entry.upTo`) into `entry`, reporting a change. */
  private fold(
    registration: Registration,
    session: Session,
    entry: ProjectionState,
    event: SessionEvent,
  ): void {
    const { definition } = registration
    let next: unknown
    try {
      next = definition.apply(entry.state, event, session)
      if (next !== entry.state) definition.schema?.parse(next)
    } catch (error) {
      entry.failure = error
      return
    }
    entry.upTo++
    if (next === entry.state) return
    entry.state = next
    this.notifyChanged(definition.key, session, next, event)
  }

  private entry(registration: Registration, session: Session): ProjectionState {
    return registration.states.get(session) ?? this.build(registration, session, session.seq)
  }

  /** Folds events below `upTo` silently (existing history is not a change). */
  private build(registration: Registration, session: Session, upTo: number): ProjectionState {
    const { definition } = registration
    const entry: ProjectionState = { state: undefined, upTo: 0 }
    registration.states.set(session, entry)
    try {
      entry.state = definition.init(session)
      definition.schema?.parse(entry.state)
      for (let event = nextEvent(session, entry, upTo); event !== undefined; ) {
        const next = definition.apply(entry.state, event, session)
        if (next !== entry.state) definition.schema?.parse(next)
        entry.state = next
        entry.upTo++
        event = nextEvent(session, entry, upTo)
      }
    } catch (error) {
      entry.failure = error
    }
    return entry
  }

  private advance(registration: Registration, session: Session, entry: ProjectionState, upTo: number): void {
    while (entry.failure === undefined) {
      const event = nextEvent(session, entry, upTo)
      if (event === undefined) return
      this.fold(registration, session, entry, event)
    }
  }

  private notifyChanged(key: string, session: Session, state: unknown, event: SessionEvent): void {
    const set = this.listeners.get(key)
    if (set === undefined) return
    for (const listener of [...set]) {
      try {
        listener(session, state, event)
      } catch (error) {
        this.home
          .logger('dsh')
          .warn(`onChanged listener of projection ${key} threw: %s`, redact(errorText(error)))
      }
    }
  }
}

/**
 * The next event `entry` folds below `upTo`, with `entry.upTo` moved to it past the chunk entries
 * before it (a run of them at once, unread); `undefined`, with `entry.upTo` at `upTo`, when only chunk
 * entries are left below `upTo`. An `entry` already at or past `upTo` is left where it is.
 */
function nextEvent(session: Session, entry: ProjectionState, upTo: number): SessionEvent | undefined {
  if (entry.upTo >= upTo) return undefined
  const seq = session.nonChunkSeq(entry.upTo)
  if (seq >= upTo) {
    entry.upTo = upTo
    return undefined
  }
  entry.upTo = seq
  return session.eventAt(seq)
}

function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error)
}
