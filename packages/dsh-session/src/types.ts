/**
 * Types of the session log: the envelope, the open event catalog, the request header, the session and
 * store faces, projections and the storage seam. Types only; runtime code lives beside each concept.
 */
import type {
  AssistantMessage,
  CallId,
  LlmCallConfig,
  LlmFailure,
  Message,
  SessionId,
  StreamChunk,
  ToolResultMessage,
  ToolSchema,
  TurnEndReason,
  TurnTrigger,
  Usage,
  UserMessage,
} from 'dsh-llm'
import type { SessionError } from './errors.ts'

/**
 * The non-history part of a model request, recorded in the log so every request can be re-derived.
 * Empty values are canonicalised to absent (no `system: ''`, no `tools: []`, no `messagePrefix: []`).
 */
export interface RequestHeader {
  readonly config: LlmCallConfig
  readonly system?: string
  readonly tools?: readonly ToolSchema[]
  /** Session-stable opening messages placed before the derived history; never in `deriveMessages()`. */
  readonly messagePrefix?: readonly Message[]
}

/** Why a `request/header` snapshot was written. */
export type RequestHeaderReason = 'initial' | 'resume' | 'change'

/** Which inbox list a message waits in. */
export type InboxTarget = 'next-turn' | 'next-step'

/**
 * One durable inbox mutation: remove `removedCount` messages at `start` of the `target` list and
 * insert `inserted` there. `outcome: 'canceled'` marks an ordinary removal; a claim has no outcome.
 */
export interface InboxSplice {
  readonly target: InboxTarget
  readonly start: number
  readonly removedCount?: number
  readonly inserted: readonly UserMessage[]
  readonly outcome?: 'canceled'
}

/** What a tool result's error was, when the result reports a failure of the harness (not the tool). */
export interface ToolResultError {
  readonly code: string
  readonly message: string
}

/**
 * Open: event payloads keyed by event type. Packages add their own types by declaration merging
 * (`declare module 'dsh-session' { interface SessionEventMap { 'my/event': {...} } }`) and register a
 * schema with `defineSessionEvent` so the log can validate and load them.
 */
export interface SessionEventMap {
  /** Opens turn `turn` (one execution of the model loop); `trigger` says what started it. */
  'turn/start': { readonly turn: number; readonly trigger: TurnTrigger }
  /** Closes the open turn; `reason` says how it ended (`interrupted` only from crash repair). */
  'turn/end': { readonly turn: number; readonly reason: TurnEndReason }
  /** Opens step `step` (1-based within the turn): one model call and its tool calls. */
  'step/start': { readonly turn: number; readonly step: number }
  /** Closes the open step. */
  'step/end': { readonly turn: number; readonly step: number }
  /** User-role model input — a prompt, injected context or steering, told apart by `source`. Allowed between turns. */
  'user/message': UserMessage
  /** One stream chunk of the model call, logged as it arrives. */
  'assistant/chunk': { readonly turn: number; readonly step: number; readonly chunk: StreamChunk }
  /** The assembled answer of one model call; `interrupted` when a cancelled stream kept its visible text. */
  'assistant/message': {
    readonly turn: number
    readonly step: number
    readonly message: AssistantMessage
    readonly usage?: Usage
    readonly interrupted?: boolean
  }
  /** A tool call starts; `arguments` is the model's raw JSON text. */
  'tool/call': {
    readonly turn: number
    readonly step: number
    readonly callId: CallId
    readonly name: string
    readonly arguments: string
  }
  /** The result of one tool call, committed in model order; `error` when the harness (not the tool) failed it. */
  'tool/result': {
    readonly turn: number
    readonly step: number
    readonly message: ToolResultMessage
    readonly error?: ToolResultError
  }
  /** A snapshot of the non-history request state, written before the first request of an instance and on change. */
  'request/header': { readonly header: RequestHeader; readonly reason: RequestHeaderReason }
  /**
   * Attempt `attempt` (1-based) of the step's model call failed with `failure` (its code, message,
   * status and provider request id) and the call is sent again after `delayMs` ms. The behaviour is
   * dsh-agent-loop's; the shape lives here so every reader of a log can load and check it.
   */
  'request/retry': {
    readonly turn: number
    readonly step: number
    readonly attempt: number
    readonly delayMs: number
    readonly failure: LlmFailure
  }
  /** Marks the end of a forked session's seed (the events copied from its parent). */
  'session/end-seed': Record<string, never>
  /** One durable inbox mutation (the behaviour is dsh-agent-loop's; the data shape lives here so checks can fold it). Allowed between turns. */
  'agent/inbox/spliced': InboxSplice
  /** A compaction begins and holds the session's compaction lock until its end (written by dsh-compaction). */
  'compaction/start': CompactionStartData
  /** A compaction ends and releases the lock; `outcome` says whether the surface changed. */
  'compaction/end': CompactionEndData
}

/** Every known event type. */
export type SessionEventType = keyof SessionEventMap & string

/**
 * How an event changes the model-facing surface. `append` adds the event's message at the end;
 * `replace` swaps surface nodes `[start, end)` for it (compaction), and `sourceEventSeqs` lists the
 * seqs of every event whose node it shadows.
 */
export type SurfaceMeta =
  | { readonly op: 'append' }
  | {
      readonly op: 'replace'
      readonly start: number
      readonly end: number
      readonly sourceEventSeqs: readonly number[]
    }

/** The envelope of one event of type `K`. Committed events are deep-frozen. */
export interface SessionEventOf<K extends SessionEventType> {
  readonly type: K
  /** Position in the log: contiguous from 0. */
  readonly seq: number
  /** Epoch milliseconds when the event was appended. */
  readonly time: number
  readonly data: SessionEventMap[K]
  readonly surface?: SurfaceMeta
}

/** Any event: a union narrowed by `type`. */
export type SessionEvent = { [K in SessionEventType]: SessionEventOf<K> }[SessionEventType]

/** The latest `request/header` snapshot, folded. */
export interface HeaderState {
  readonly header: RequestHeader
  readonly reason: RequestHeaderReason
  /** The seq of the snapshot event. */
  readonly seq: number
}

/** Where an open turn stands, folded from the log. */
export interface OpenTurnState {
  readonly turn: number
  /** The open step, if any. */
  readonly step?: number
  /** The last step number used in this turn (0 before the first step). */
  readonly lastStep: number
}

/** Fork provenance recorded on a child session. */
export interface SessionParent {
  readonly sessionId: SessionId
  /** How many events of the parent were copied (the child's `session/end-seed` sits at this seq). */
  readonly seedLength: number
}

/**
 * A check run before an event commits; it throws to refuse the event (the log is left unchanged).
 * A guard with a `chunk` hook is handed chunk entries through it, without an event envelope; a guard
 * without one gets each chunk as a built `assistant/chunk` candidate (which costs an envelope per
 * chunk).
 */
export interface AppendGuard {
  (session: Session, candidate: SessionEvent): void
  /** Checks a chunk entry about to commit at `seq` (its time is not known yet); throws to refuse it. */
  chunk?(session: Session, seq: number, turn: number, step: number, chunk: StreamChunk): void
}

/**
 * A listener of committed chunk entries (`SessionStore.onChunk`, `session/chunk`): the parts of the
 * `assistant/chunk` event at `seq`, which `session.eventAt(seq)` builds when an envelope is wanted.
 */
export type SessionChunkListener = (
  session: Session,
  seq: number,
  time: number,
  turn: number,
  step: number,
  chunk: StreamChunk,
) => void

/** One append-only log. */
export interface Session {
  readonly id: SessionId
  /**
   * Every committed event, in seq order, frozen, equal to what was appended: a frozen plain array
   * (in-place mutators throw `READ_ONLY`) that `structuredClone` copies. A snapshot: the same array
   * while nothing is appended, a new one after (an array read earlier keeps its length). The
   * `assistant/chunk` events of a committed step are kept compactly and rebuilt when a snapshot is
   * taken, so compare events by `seq`, not by identity. Reading it after every append costs the log's
   * length each time: a fold that follows the log event by event reads `eventAt` instead.
   */
  readonly events: readonly SessionEvent[]
  /**
   * The committed event of `seq` (`undefined` at or past `seq`): what `events[seq]` holds, without
   * taking a snapshot of the whole log. A folded chunk event is rebuilt (an equal, new object).
   */
  eventAt(seq: number): SessionEvent | undefined
  /**
   * The type of the committed event of `seq` (`undefined` at or past `seq`), without rebuilding a
   * folded chunk event: a fold that ignores `assistant/chunk` events reads it first and skips them.
   */
  eventTypeAt(seq: number): SessionEventType | undefined
  /**
   * The first seq at or after `seq` whose event is not an `assistant/chunk` (`seq` itself when it is
   * not one), or `session.seq` when only chunk entries follow: a fold that skips chunk entries passes
   * a step's run of them in one call instead of one seq at a time. Throws `RangeError` unless `seq` is
   * a non-negative integer.
   */
  nonChunkSeq(seq: number): number
  /** The seq the next event will get (equals `events.length`). */
  readonly seq: number
  readonly parent?: SessionParent
  /**
   * What opening this session from storage had to mend: a torn final line cut off, and how many
   * repair closers were committed for an interrupted final turn. Absent for a session created or
   * forked in this process.
   */
  readonly loadReport?: LoadReport
  /**
   * Appends one event: snapshots `data` as plain JSON, validates it and the turn enclosure, runs the
   * store's guards, deep-freezes, commits, then notifies `session/event` listeners (for an
   * `assistant/chunk`, the chunk listeners instead: see `appendChunk`). Throws a
   * `SessionError` naming the event type (and the offending path) when refused; the log is then
   * unchanged. Throws when called from inside another append's notification.
   */
  append<K extends SessionEventType>(
    type: K,
    data: SessionEventMap[K],
    surface?: SurfaceMeta,
  ): SessionEventOf<K>
  /**
   * Appends one `assistant/chunk` entry and returns its seq: what `append('assistant/chunk', {turn,
   * step, chunk})` commits (the same checks, errors and stored bytes), written into the step's open
   * chunk run without building an event. Chunk listeners (`onChunk`, `session/chunk`) are told;
   * `session/event` listeners are not. `now`, a `Date.now()` reading the caller just took (the agent
   * loop passes the one its time-slice check read), is the entry's time when the store's clock is
   * `Date.now`, saving a second clock read; it is ignored under another clock (a configured
   * `clock`, a repair) and unless it is a safe integer.
   */
  appendChunk(turn: number, step: number, chunk: StreamChunk, now?: number): number
  /** The model's history folded from the surface. Incremental; frozen messages. */
  deriveMessages(): readonly Message[]
  /**
   * The same history as `deriveMessages()`, as an immutable view taken in O(1) whatever the
   * session's length (consecutive views share their storage); `toArray()` returns the frozen array
   * `deriveMessages()` would have returned at the time the view was taken.
   */
  deriveHistory(): HistoryView
  /** The latest request header snapshot, or `undefined` before the first. */
  requestHeader(): HeaderState | undefined
  /** The open turn, or `undefined` between turns. */
  openTurn(): OpenTurnState | undefined
  /** The highest turn number used so far (0 for a fresh log). */
  lastTurn(): number
  /** Resolves once every event appended so far is durable in the store's backend. */
  flush(): Promise<void>
  /**
   * Whether every event appended so far is already durable in the store's backend, so that `flush()`
   * has nothing to wait for. A synchronous check: a caller at a durability barrier awaits `flush()`
   * only when this is false (over `MemoryStorage`, which stores each event as it commits, it is true
   * unless the backend refused an event that a `flush` must retry).
   */
  isDurable(): boolean
  /**
   * Resolves once the session's unsynced events are at or below the store's high-water mark (at once
   * when they are, or in the next event-loop turn once producers awaiting it have held the loop for
   * 2 ms). A producer appending in bulk awaits it before each append so a slow backend makes it wait
   * instead of growing memory. Rejects with the backend's failure if writing stopped.
   */
  writable(): Promise<void>
  /**
   * Whether `writable()` would wait now: the session's unsynced events are above the high-water mark.
   * A synchronous check, so a producer in a hot loop pays for the await only when it must wait.
   */
  mustWait(): boolean
}

/** A keyed pure fold over a session's events. */
export interface ProjectionDefinition<S> {
  readonly key: string
  init(session: Session): S
  apply(state: S, event: SessionEvent, session: Session): S
  /** Optional zod (or any `{parse}`) schema the state is validated against after each change. */
  readonly schema?: { parse(value: unknown): S }
}

/** The registry of projections (`ctx.sessionProjections`). */
export interface SessionProjections {
  /** Registers a fold; an effect of the calling fiber. Throws if the key is taken. */
  register<S>(definition: ProjectionDefinition<S>): () => void
  /** The folded state for `session`, built lazily over existing history. Throws for an unknown key. */
  get<S>(session: Session, key: string): S
  /** Calls `listener` after each change of `key`'s state for any session; returns a disposer. */
  onChanged<S>(key: string, listener: (session: Session, state: S, event: SessionEvent) => void): () => void
}

/** What a backend stores ahead of a session's events. */
export interface SessionFileHeader {
  readonly format: 'dsh-session'
  readonly version: number
  readonly sessionId: SessionId
  readonly createdAt: number
  readonly parent?: SessionParent
}

/** What a backend reports about a load it had to mend. */
export interface LoadReport {
  /** A torn final line that was cut off, with its 1-based line number and length in bytes. */
  readonly truncatedTail?: { readonly line: number; readonly bytes: number }
  /** How many repair closers were committed for an interrupted final turn. */
  readonly repairedEvents: number
  /** The session's file when people other than its owner can read it (file-backed storages). */
  readonly exposed?: ExposedSession
}

/**
 * A stored session people other than its owner can read: its file's mode grants group or world
 * read beyond what the storage was configured to create (`JsonlStorageOptions.fileMode`).
 */
export interface ExposedSession {
  readonly path: string
  readonly sessionId: string
  /** The permission bits found (e.g. `0o644`). */
  readonly mode: number
}

/** One stored entry `list()` could not read as a session, and why. */
export interface StorageProblem {
  /** Where the entry is: a file path, or a backend's own locator (a table row, a key). */
  readonly path: string
  /** The session id the entry names, when the name is usable as one. */
  readonly sessionId?: string
  /** Why it was skipped, for people. */
  readonly reason: string
  /** The typed error reading it raised, when there was one. */
  readonly error?: SessionError
}

/** What `list()` found: every readable session's header, and every entry it had to skip. */
export interface SessionListing {
  /** Headers of the readable sessions, oldest first (ties by id). */
  readonly sessions: readonly SessionFileHeader[]
  /** Entries that are not readable sessions (corrupt, unreadable, foreign); never thrown. */
  readonly problems: readonly StorageProblem[]
  /** Readable sessions that people other than their owner can read too (file-backed storages). */
  readonly exposed?: readonly ExposedSession[]
}

/**
 * The derived history at one point of a session, without copying it: `length` messages, materialized
 * as a frozen array (built once, on first use) by `toArray()`. Later appends do not change a view.
 */
export interface HistoryView {
  readonly length: number
  toArray(): readonly Message[]
  /** The message at `index` (`undefined` outside `[0, length)`), without building the array. */
  at(index: number): Message | undefined
  /**
   * Whether this view continues `earlier`: both read one append-only store and `earlier` is no
   * longer, so this view's first `earlier.length` messages are `earlier`'s, the very same objects.
   */
  continues(earlier: HistoryView): boolean
}

/** A listener of committed events (`SessionStore.onEvent`). */
export type SessionEventListener = (session: Session, event: SessionEvent) => void

/** The session store (`ctx.sessions`). */
export interface SessionStore {
  /** Creates a new, empty session (optionally with a chosen id) in the configured storage. */
  create(options?: { id?: SessionId }): Promise<Session>
  /** A live session of this process, if one is open. */
  get(id: SessionId): Session | undefined
  /** Opens a stored session (loads, repairs an interrupted tail, takes the write lease). */
  open(id: SessionId): Promise<Session>
  /** Headers of every stored session, and the stored entries that could not be read (never thrown). */
  list(): Promise<SessionListing>
  /** Copies `source`'s events below `boundarySeq` into a new session, then `session/end-seed`. */
  fork(source: Session, boundarySeq: number): Promise<Session>
  /** Durability barrier: resolves when everything appended to `session` so far is durable. */
  flush(session: Session): Promise<void>
  /** Flushes, releases the lease and forgets the live session. */
  close(session: Session): Promise<void>
  /** Adds a pre-commit check for every session; an effect of the calling fiber. */
  guard(check: AppendGuard): () => void
  /**
   * Calls `listener` after each committed event of any live session (after `session/event`), chunk
   * entries excepted (`onChunk`); an effect of the calling fiber. A plain call per event, without
   * cordis's listener tracing.
   */
  onEvent(listener: SessionEventListener): () => void
  /**
   * Calls `listener` after each committed chunk entry of any live session (after `session/chunk`);
   * an effect of the calling fiber. The live channel of chunks: `session/event` does not carry them.
   */
  onChunk(listener: SessionChunkListener): () => void
}

/** The two inbox lists, folded from `agent/inbox/spliced` events. Frozen. */
export interface InboxState {
  readonly nextTurn: readonly UserMessage[]
  readonly nextStep: readonly UserMessage[]
}

/** An event not yet appended: its type and payload (what `append` takes, without the envelope). */
export type SessionEventInput = {
  [K in SessionEventType]: { readonly type: K; readonly data: SessionEventMap[K] }
}[SessionEventType]

/** Where an event type may stand: only inside an open turn, or also between turns. */
export type EventEnclosure = 'turn' | 'anywhere'

/**
 * Where an event type may stand (the catalog's `placement`): `anywhere` (also between turns),
 * `turn` (only inside an open turn), `step` (only inside the open step its `{turn, step}` names).
 */
export type EventPlacement = 'anywhere' | 'turn' | 'step'

/** Closed: what started a compaction. */
export type CompactionTrigger = 'threshold' | 'overflow' | 'manual'

/** Closed: how a compaction shrinks the surface. */
export type CompactionStrategy = 'prune' | 'summarize'

/**
 * Closed: how a compaction ended. `completed`: the surface was replaced; `rejected`: the summary did
 * not shrink the history, nothing was replaced; `failed`: the summarizing call failed, nothing was
 * replaced; `interrupted`: the process died before the end, and repair rolled the surface back.
 */
export type CompactionOutcomeKind = 'completed' | 'rejected' | 'failed' | 'interrupted'

/** Payload of `compaction/start`: a compaction begins; it holds the session's compaction lock until its end. */
export interface CompactionStartData {
  /** Unique per session; the ids of the surface messages the compaction writes start with `<id>:`. */
  readonly id: string
  readonly trigger: CompactionTrigger
  readonly strategy: CompactionStrategy
  /** The context window (tokens) the compaction was sized for. */
  readonly window: number
  /** The estimated tokens of the next request before the compaction. */
  readonly tokensBefore: number
  /** How many surface replaces the compaction appends when it completes (prune: one per result; summarize: 1). */
  readonly replaces: number
  /** The surface range `[0, end)` the summary replaces (summarize only). */
  readonly summarizes?: number
  /** The turn and step it ran in, when it ran inside a turn. */
  readonly turn?: number
  readonly step?: number
}

/** Payload of `compaction/end`: releases the lock and says what became of the compaction. */
export interface CompactionEndData {
  readonly id: string
  readonly outcome: CompactionOutcomeKind
  /** The estimated tokens of the next request after the compaction (absent when repair closed it). */
  readonly tokensAfter?: number
  /** Why a compaction was rejected or failed, for people. */
  readonly reason?: string
  /** Set when crash repair wrote this event. */
  readonly repaired?: boolean
}
