/**
 * The one way a model request is built from a request header and the derived history. The agent
 * loop builds every request through it; the invariants rebuild through it and compare.
 */
import type { LlmRequest, Message, SessionId } from 'dsh-llm'
import { deepFreeze } from 'dsh-llm'
import type { HistoryView, RequestHeader } from './types.ts'

/** What a request carries besides the header and history. */
export interface RequestExtras {
  readonly sessionId?: SessionId
  /** Attached as is (not frozen, not copied). */
  readonly signal?: AbortSignal
}

/**
 * Builds the request: the header's config scalars (`provider`, `model`, and `temperature`,
 * `maxTokens`, `reasoningEffort`, `stop` only when present), `system` if present, `messages =
 * [...messagePrefix, ...history]`, `tools` if present, then `sessionId` and `signal` from `extras`.
 * Empty `system`/`tools`/`messagePrefix` count as absent. The result is deep-frozen except the signal;
 * when there is no prefix, `messages` is `history` itself (frozen in place if it was not already).
 *
 * `history` may be a `HistoryView` (`session.deriveHistory()`): then `messages` is a getter that
 * materializes the view's frozen array (with the prefix in front) on first read and returns the same
 * array on every read, so composing costs O(1) in the history's length and only a reader pays for
 * the array. The request is frozen either way.
 */
export function composeRequest(
  header: RequestHeader,
  history: readonly Message[] | HistoryView,
  extras: RequestExtras = {},
): LlmRequest {
  const { config } = header
  const prefix = header.messagePrefix ?? []
  let messages: readonly Message[] | undefined
  let view: HistoryView | undefined
  if (isView(history)) view = history
  else messages = withPrefix(prefix, history)
  // Built member by member rather than as a literal of conditional spreads, which cost a temporary
  // object per optional member and a slow literal on every step; the keys and their order are the same.
  const request: Record<string, unknown> = { provider: config.provider, model: config.model }
  if (config.temperature !== undefined) request.temperature = config.temperature
  if (config.maxTokens !== undefined) request.maxTokens = config.maxTokens
  if (config.reasoningEffort !== undefined) request.reasoningEffort = config.reasoningEffort
  if (config.stop !== undefined) request.stop = deepFreeze(config.stop)
  if (header.system !== undefined && header.system !== '') request.system = header.system
  Object.defineProperty(request, 'messages', {
    get(): readonly Message[] {
      if (messages === undefined && view !== undefined) {
        messages = withPrefix(prefix, view.toArray())
        view = undefined
      }
      return messages ?? []
    },
    enumerable: true,
    configurable: true,
  })
  if (header.tools !== undefined && header.tools.length > 0) request.tools = deepFreeze(header.tools)
  if (extras.sessionId !== undefined) request.sessionId = extras.sessionId
  if (extras.signal !== undefined) request.signal = extras.signal
  return Object.freeze(request) as unknown as LlmRequest
}

function withPrefix(prefix: readonly Message[], list: readonly Message[]): readonly Message[] {
  return deepFreeze(prefix.length === 0 ? list : [...prefix, ...list])
}

function isView(history: readonly Message[] | HistoryView): history is HistoryView {
  return !Array.isArray(history)
}
