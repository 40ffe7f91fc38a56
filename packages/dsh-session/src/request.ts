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
  const withPrefix = (list: readonly Message[]) =>
    deepFreeze(prefix.length === 0 ? list : [...prefix, ...list])
  let messages: readonly Message[] | undefined
  let view: HistoryView | undefined
  if (isView(history)) view = history
  else messages = withPrefix(history)
  const request: LlmRequest = {
    provider: config.provider,
    model: config.model,
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.maxTokens === undefined ? {} : { maxTokens: config.maxTokens }),
    ...(config.reasoningEffort === undefined ? {} : { reasoningEffort: config.reasoningEffort }),
    ...(config.stop === undefined ? {} : { stop: deepFreeze(config.stop) }),
    ...(header.system === undefined || header.system === '' ? {} : { system: header.system }),
    get messages(): readonly Message[] {
      if (messages === undefined && view !== undefined) {
        messages = withPrefix(view.toArray())
        view = undefined
      }
      return messages ?? []
    },
    ...(header.tools === undefined || header.tools.length === 0 ? {} : { tools: deepFreeze(header.tools) }),
    ...(extras.sessionId === undefined ? {} : { sessionId: extras.sessionId }),
    ...(extras.signal === undefined ? {} : { signal: extras.signal }),
  }
  return Object.freeze(request)
}

function isView(history: readonly Message[] | HistoryView): history is HistoryView {
  return !Array.isArray(history)
}
