/**
 * The durable inbox as a fold of `agent/inbox/spliced` events. dsh-agent-loop registers the
 * standard `inbox` projection with these functions; checkers replay them to validate splices.
 */
import type { UserMessage } from 'dsh-llm'
import { SessionError } from './errors.ts'
import type { InboxSplice, InboxState, SessionEvent } from './types.ts'

/** The empty inbox (frozen). */
export const emptyInbox: InboxState = Object.freeze({
  nextTurn: Object.freeze([]) as readonly UserMessage[],
  nextStep: Object.freeze([]) as readonly UserMessage[],
})

/**
 * Applies one splice (recorded at `seq`) and returns the new frozen state; `state` is not changed.
 * Throws `SessionError` `INVALID_SPLICE` naming the seq and the problem when `start` or
 * `removedCount` is not a safe integer within the target list, or an inserted message id is already
 * pending in either list (messages this splice removes do not count) or appears twice in the batch.
 */
export function applyInboxSplice(state: InboxState, splice: InboxSplice, seq: number): InboxState {
  const key = splice.target === 'next-turn' ? 'nextTurn' : 'nextStep'
  const list = state[key]
  const removedCount = splice.removedCount ?? 0
  const { start } = splice
  if (!Number.isSafeInteger(start) || start < 0 || start > list.length) {
    fail(seq, `start ${String(start)} is outside the ${splice.target} list of ${list.length} messages`)
  }
  if (!Number.isSafeInteger(removedCount) || removedCount < 0 || start + removedCount > list.length) {
    fail(
      seq,
      `removedCount ${String(removedCount)} at start ${start} exceeds the ${splice.target} list of ${list.length} messages`,
    )
  }
  if (splice.inserted.length > 0) {
    const removed = new Set<string>()
    for (let i = start; i < start + removedCount; i++) {
      const message = list[i]
      if (message !== undefined) removed.add(message.id)
    }
    const pending = new Set<string>()
    for (const message of state.nextTurn) if (!removed.has(message.id)) pending.add(message.id)
    for (const message of state.nextStep) if (!removed.has(message.id)) pending.add(message.id)
    const batch = new Set<string>()
    for (const message of splice.inserted) {
      if (pending.has(message.id)) fail(seq, `message ${message.id} is already pending in the inbox`)
      if (batch.has(message.id)) fail(seq, `message ${message.id} is inserted twice in one splice`)
      batch.add(message.id)
    }
  }
  if (removedCount === 0 && splice.inserted.length === 0) return state
  const next = [...list.slice(0, start), ...splice.inserted, ...list.slice(start + removedCount)]
  return Object.freeze({ ...state, [key]: Object.freeze(next) })
}

/** Folds every `agent/inbox/spliced` event of `events` from the empty inbox. Throws like `applyInboxSplice`. */
export function foldInbox(events: readonly SessionEvent[]): InboxState {
  let state = emptyInbox
  for (const event of events) {
    if (event.type === 'agent/inbox/spliced') state = applyInboxSplice(state, event.data, event.seq)
  }
  return state
}

function fail(seq: number, problem: string): never {
  throw new SessionError('INVALID_SPLICE', `agent/inbox/spliced at seq ${seq}: ${problem}`, {
    eventType: 'agent/inbox/spliced',
    seq,
  })
}
