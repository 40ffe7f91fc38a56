/**
 * The durable inbox: two lists of pending `UserMessage`s, folded from `agent/inbox/spliced` events
 * by the standard `inbox` projection. `Inbox` is the public face; `ReactLoopInbox` adds the
 * loop-only claim.
 */
import type { MessageId, UserMessage } from 'dsh-llm'
import {
  applyInboxSplice,
  emptyInbox,
  type InboxSplice,
  type InboxState,
  type InboxTarget,
  type ProjectionDefinition,
  type Session,
  type SessionEvent,
  type SessionProjections,
} from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode } from '../errors.ts'

/** The key of the standard inbox projection on `ctx.sessionProjections`. */
export const INBOX_PROJECTION = 'inbox'

/**
 * The standard inbox projection: folds `agent/inbox/spliced` events with `applyInboxSplice`, so a
 * persisted splice with bad coordinates or a duplicate id throws `SessionError` `INVALID_SPLICE`
 * naming its seq.
 */
export const inboxProjection: ProjectionDefinition<InboxState> = Object.freeze({
  key: INBOX_PROJECTION,
  init: () => emptyInbox,
  apply: (state: InboxState, event: SessionEvent) =>
    event.type === 'agent/inbox/spliced'
      ? sharedWhenEmpty(applyInboxSplice(state, event.data, event.seq))
      : state,
})

/**
 * `state`, or the shared `emptyInbox` when both lists are empty: an idle agent's inbox state is then
 * no object of its own. (A splice that changes nothing returns its input, so an empty state never
 * becomes a new empty one: a change is still a change.)
 */
function sharedWhenEmpty(state: InboxState): InboxState {
  return state.nextTurn.length === 0 && state.nextStep.length === 0 ? emptyInbox : state
}

/** Where a pending message waits. */
export interface InboxEntry {
  readonly target: InboxTarget
  readonly index: number
  readonly message: UserMessage
}

/**
 * The pending work of one agent, durable. Every mutation is validated, then recorded as one
 * `agent/inbox/spliced` event, then applied; invalid mutations throw `AgentLoopError`
 * `INVALID_INBOX_MUTATION` and change nothing. A message id may be pending only once across both
 * lists. Mutations that change nothing write nothing.
 */
export interface Inbox {
  /** Messages waiting for the next turn, oldest first (frozen). */
  readonly nextTurn: readonly UserMessage[]
  /** Messages waiting for the next step, oldest first (frozen). */
  readonly nextStep: readonly UserMessage[]
  /** Both lists at once (frozen). */
  snapshot(): InboxState
  /** Where the message with `id` waits, or `undefined` when it is not pending. */
  find(id: MessageId): InboxEntry | undefined
  /** Adds `messages` at the end of `target`. */
  append(target: InboxTarget, ...messages: UserMessage[]): void
  /** Adds `messages` at the front of `target`. */
  prepend(target: InboxTarget, ...messages: UserMessage[]): void
  /**
   * Removes `deleteCount` messages at `start` of `target` and inserts `messages` there; returns the
   * removed messages. Removed messages are discarded (outcome `canceled`).
   */
  splice(
    target: InboxTarget,
    start: number,
    deleteCount: number,
    ...messages: UserMessage[]
  ): readonly UserMessage[]
  /** Replaces the pending message `id` with `message` (which may have another id). */
  replace(id: MessageId, message: UserMessage): void
  /** Discards the pending message `id` and returns it. */
  remove(id: MessageId): UserMessage
  /** Discards everything pending. */
  clear(): void
}

/** Receives the inbox's live notifications. */
export interface InboxNotifier {
  inserted(message: UserMessage): void
  discarded(message: UserMessage): void
  claimed(message: UserMessage, turn: number): void
}

function listOf(state: InboxState, target: InboxTarget): readonly UserMessage[] {
  return target === 'next-turn' ? state.nextTurn : state.nextStep
}

function refuse(message: string): never {
  throw new AgentLoopError(AgentLoopErrorCode.INVALID_INBOX_MUTATION, message)
}

/**
 * The inbox behind an agent: structural commands plus the loop's `claim`. Reads and writes the
 * shared `inbox` projection of its session; it holds no state of its own.
 */
export class ReactLoopInbox implements Inbox {
  constructor(
    private readonly projections: SessionProjections,
    private readonly session: Session,
    private readonly notify: InboxNotifier,
  ) {}

  get nextTurn(): readonly UserMessage[] {
    return this.snapshot().nextTurn
  }

  get nextStep(): readonly UserMessage[] {
    return this.snapshot().nextStep
  }

  snapshot(): InboxState {
    return this.projections.get<InboxState>(this.session, INBOX_PROJECTION)
  }

  find(id: MessageId): InboxEntry | undefined {
    const state = this.snapshot()
    for (const target of ['next-turn', 'next-step'] as const) {
      const index = listOf(state, target).findIndex((message) => message.id === id)
      const message = listOf(state, target)[index]
      if (message !== undefined) return Object.freeze({ target, index, message })
    }
    return undefined
  }

  append(target: InboxTarget, ...messages: UserMessage[]): void {
    this.checkTarget('append', target)
    this.splice(target, listOf(this.snapshot(), target).length, 0, ...messages)
  }

  prepend(target: InboxTarget, ...messages: UserMessage[]): void {
    this.splice(target, 0, 0, ...messages)
  }

  splice(
    target: InboxTarget,
    start: number,
    deleteCount: number,
    ...messages: UserMessage[]
  ): readonly UserMessage[] {
    this.checkTarget('splice', target)
    const state = this.snapshot()
    const list = listOf(state, target)
    const where = `Inbox.splice(${target}, ${String(start)}, ${String(deleteCount)})`
    if (!Number.isSafeInteger(start) || start < 0 || start > list.length) {
      refuse(`${where}: start is outside the ${target} list of ${list.length} messages`)
    }
    if (!Number.isSafeInteger(deleteCount) || deleteCount < 0 || start + deleteCount > list.length) {
      refuse(`${where}: deleteCount runs past the ${target} list of ${list.length} messages`)
    }
    const removed = list.slice(start, start + deleteCount)
    this.checkInserted(where, state, removed, messages)
    if (removed.length === 0 && messages.length === 0) return Object.freeze([])
    const splice: InboxSplice =
      removed.length === 0
        ? { target, start, inserted: messages }
        : { target, start, removedCount: removed.length, inserted: messages, outcome: 'canceled' }
    this.session.append('agent/inbox/spliced', splice)
    for (const message of removed) this.notify.discarded(message)
    for (const message of messages) this.notify.inserted(message)
    return Object.freeze(removed)
  }

  replace(id: MessageId, message: UserMessage): void {
    const entry = this.find(id)
    if (entry === undefined) refuse(`Inbox.replace: message ${id} is not pending`)
    this.splice(entry.target, entry.index, 1, message)
  }

  remove(id: MessageId): UserMessage {
    const entry = this.find(id)
    if (entry === undefined) refuse(`Inbox.remove: message ${id} is not pending`)
    this.splice(entry.target, entry.index, 1)
    return entry.message
  }

  clear(): void {
    for (const target of ['next-turn', 'next-step'] as const) {
      const length = listOf(this.snapshot(), target).length
      if (length > 0) this.splice(target, 0, length)
    }
  }

  /** True when either list holds a message. */
  hasPending(): boolean {
    const state = this.snapshot()
    return state.nextTurn.length > 0 || state.nextStep.length > 0
  }

  /**
   * Atomically takes the batch for turn `turn`'s next step: at a turn boundary the oldest next-turn
   * message, then every next-step message. Writes pure-deletion splices (no outcome) and notifies
   * `claimed` once per message, in batch order. Returns the batch (frozen, possibly empty).
   */
  claim(turn: number, turnBoundary: boolean): readonly UserMessage[] {
    const state = this.snapshot()
    const batch: UserMessage[] = []
    const first = state.nextTurn[0]
    if (turnBoundary && first !== undefined) {
      this.session.append('agent/inbox/spliced', {
        target: 'next-turn',
        start: 0,
        removedCount: 1,
        inserted: [],
      })
      batch.push(first)
    }
    if (state.nextStep.length > 0) {
      this.session.append('agent/inbox/spliced', {
        target: 'next-step',
        start: 0,
        removedCount: state.nextStep.length,
        inserted: [],
      })
      batch.push(...state.nextStep)
    }
    for (const message of batch) this.notify.claimed(message, turn)
    return Object.freeze(batch)
  }

  private checkTarget(operation: string, target: InboxTarget): void {
    if (target !== 'next-turn' && target !== 'next-step') {
      refuse(`Inbox.${operation}: target must be 'next-turn' or 'next-step', got ${JSON.stringify(target)}`)
    }
  }

  private checkInserted(
    where: string,
    state: InboxState,
    removed: readonly UserMessage[],
    messages: readonly UserMessage[],
  ): void {
    if (messages.length === 0) return
    const leaving = new Set<string>(removed.map((message) => message.id))
    const pending = new Set<string>()
    for (const message of state.nextTurn) if (!leaving.has(message.id)) pending.add(message.id)
    for (const message of state.nextStep) if (!leaving.has(message.id)) pending.add(message.id)
    const batch = new Set<string>()
    for (const message of messages) {
      if (message === null || typeof message !== 'object' || message.role !== 'user') {
        refuse(`${where}: only user messages can be queued`)
      }
      if (typeof message.id !== 'string' || message.id === '') refuse(`${where}: a message has no id`)
      if (pending.has(message.id)) refuse(`${where}: message ${message.id} is already pending in the inbox`)
      if (batch.has(message.id)) refuse(`${where}: message ${message.id} is inserted twice`)
      batch.add(message.id)
    }
  }
}
