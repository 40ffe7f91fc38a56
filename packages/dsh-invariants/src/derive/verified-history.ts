/**
 * The incremental half of the online messages compare: what the last passing request of a session
 * was verified to carry, so the next one is compared only where it can differ from it.
 */
import type { LlmRequest, Message } from 'dsh-llm'
import { type HistoryView, requestMessageParts } from 'dsh-session'
import { compareMessages, isDeepFrozen, type KnownEqual } from './compare.ts'
import type { RequestFold } from './request-fold.ts'

/** Messages of the already verified part re-checked per request, in a sweep that wraps around. */
export const RECHECKS_PER_REQUEST = 2

/**
 * Compares a request's messages with a fold's history. A request the session composed from a
 * history view (`requestMessageParts`) is read through the view, never materialized: message `i`
 * passes when it is the very object the fold holds at `i`. When the view continues the one the last
 * passing request carried (same append-only store, `continues`) and the fold's history was not
 * rebuilt since, the first `verified` messages are those already checked, so only the new tail is
 * compared, plus `RECHECKS_PER_REQUEST` messages of the verified part in a sweep (a store changed in
 * place below a view it handed out is caught within `verified / RECHECKS_PER_REQUEST` requests).
 * Anything else — a plain messages array, a prefix or length that differs, a message that is not
 * the fold's object — goes to the full field-by-field compare, which names the difference.
 */
export class VerifiedHistory {
  private view: HistoryView | undefined
  private refolds = -1
  private sweep = 0
  /** Found values (prefix messages, config members) already walked and found equal. */
  readonly known: KnownEqual = { equal: new WeakMap() }
  /**
   * Messages compared so far: through a view, the new tail and the rechecks; in a full compare, every
   * message of the request. Pins the incremental cost in tests.
   */
  compared = 0

  /**
   * The first difference between `found.messages` and `[...prefix, ...fold.history]` as a sentence,
   * or `undefined` when they agree. `prefixLength` names the parts in the sentence.
   */
  compare(
    prefix: readonly Message[],
    fold: RequestFold,
    found: LlmRequest,
    prefixLength: number,
  ): string | undefined {
    const history = fold.history
    const parts = requestMessageParts(found)
    const view = parts?.history
    const earlier = this.view
    this.view = undefined
    if (
      view === undefined ||
      !this.samePrefix(parts?.prefix ?? [], prefix) ||
      view.length !== history.length
    ) {
      return this.full(prefix, fold, found, prefixLength, view)
    }
    const verified =
      earlier !== undefined && this.refolds === fold.refolds && view.continues(earlier) ? earlier.length : 0
    for (let i = verified; i < history.length; i++) {
      if (view.at(i) !== history[i]) return this.full(prefix, fold, found, prefixLength, view)
    }
    this.compared += history.length - verified
    const rechecks = Math.min(RECHECKS_PER_REQUEST, verified)
    for (let k = 0; k < rechecks; k++) {
      const i = this.sweep++ % verified
      if (view.at(i) !== history[i]) return this.full(prefix, fold, found, prefixLength, view)
    }
    this.compared += rechecks
    this.view = view
    this.refolds = fold.refolds
    return undefined
  }

  /**
   * The full compare, which materializes `found.messages`. A request it passes is the verified base
   * of the next one (when it came with a view), and its prefix messages that are deep-frozen copies
   * are remembered as equal, so the next request's prefix is compared by identity.
   */
  private full(
    prefix: readonly Message[],
    fold: RequestFold,
    found: LlmRequest,
    prefixLength: number,
    view: HistoryView | undefined,
  ): string | undefined {
    const messages = found.messages
    this.compared += messages.length
    const problem = compareMessages({ prefix, history: fold.history }, messages, prefixLength)
    if (problem !== undefined) return problem
    for (let i = 0; i < prefix.length; i++) {
      const message = messages[i] as Message
      if (message !== prefix[i] && isDeepFrozen(message)) this.known.equal.set(message, prefix[i])
    }
    if (view !== undefined) {
      this.view = view
      this.refolds = fold.refolds
    }
    return undefined
  }

  /** The found prefix holds the expected prefix's messages (the same objects, or ones walked equal before). */
  private samePrefix(found: readonly Message[], expected: readonly Message[]): boolean {
    if (found.length !== expected.length) return false
    for (let i = 0; i < found.length; i++) {
      const message = found[i] as Message
      if (message !== expected[i] && this.known.equal.get(message) !== expected[i]) return false
    }
    return true
  }
}
