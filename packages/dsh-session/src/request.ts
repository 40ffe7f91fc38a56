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
 * `maxTokens`, `reasoningEffort`, `stop`, `cachePolicy` only when present), `system` if present, `messages =
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
  const source: MessagesSource = isView(history)
    ? { prefix, view: history, messages: undefined }
    : { prefix, view: undefined, messages: withPrefix(prefix, history) }
  // Built member by member rather than as a literal of conditional spreads, which cost a temporary
  // object per optional member and a slow literal on every step; the keys and their order are the same.
  const request: Record<string | symbol, unknown> = { provider: config.provider, model: config.model }
  if (config.temperature !== undefined) request.temperature = config.temperature
  if (config.maxTokens !== undefined) request.maxTokens = config.maxTokens
  if (config.reasoningEffort !== undefined) request.reasoningEffort = config.reasoningEffort
  if (config.stop !== undefined) request.stop = deepFreeze(config.stop)
  if (config.cachePolicy !== undefined) request.cachePolicy = deepFreeze(config.cachePolicy)
  if (header.system !== undefined && header.system !== '') request.system = header.system
  // One getter shared by every request, its state in a hidden member: a getter made per request
  // would differ from the last one, and V8 then moves each request to a slow dictionary object.
  Object.defineProperty(request, SOURCE, { value: source })
  Object.defineProperty(request, 'messages', MESSAGES)
  if (header.tools !== undefined && header.tools.length > 0) request.tools = deepFreeze(header.tools)
  if (extras.sessionId !== undefined) request.sessionId = extras.sessionId
  if (extras.signal !== undefined) request.signal = extras.signal
  return Object.freeze(request) as unknown as LlmRequest
}

/** Where a request's `messages` come from: the array, or the view and prefix it is built from on first read. */
interface MessagesSource {
  readonly prefix: readonly Message[]
  readonly view: HistoryView | undefined
  messages: readonly Message[] | undefined
}

/** The parts a request composed from a `HistoryView` builds its `messages` from. */
export interface RequestMessageParts {
  /** The header's `messagePrefix` (empty when absent). */
  readonly prefix: readonly Message[]
  /** The history view: `messages` is `[...prefix, ...history.toArray()]`. */
  readonly history: HistoryView
}

/**
 * How `request.messages` is made, read without building it: the prefix and the history view it was
 * composed from. `undefined` for a request `composeRequest` did not build from a view (a plain
 * history array, or a copy: spreading a request copies `messages` as a plain array).
 */
export function requestMessageParts(request: LlmRequest): RequestMessageParts | undefined {
  const source = (request as { readonly [SOURCE]?: MessagesSource })[SOURCE]
  if (source?.view === undefined) return undefined
  return { prefix: source.prefix, history: source.view }
}

/** The key of a request's `MessagesSource`: not enumerable, so no copy, spread or `JSON.stringify` sees it. */
const SOURCE = Symbol('dsh-session.request-messages')

/** The `messages` accessor of every composed request. */
const MESSAGES: PropertyDescriptor = Object.freeze({
  get(this: { readonly [SOURCE]?: MessagesSource }): readonly Message[] {
    const source = this[SOURCE]
    if (source === undefined) return []
    if (source.messages === undefined && source.view !== undefined) {
      source.messages = withPrefix(source.prefix, source.view.toArray())
    }
    return source.messages ?? []
  },
  enumerable: true,
  configurable: true,
})

function withPrefix(prefix: readonly Message[], list: readonly Message[]): readonly Message[] {
  return deepFreeze(prefix.length === 0 ? list : [...prefix, ...list])
}

function isView(history: readonly Message[] | HistoryView): history is HistoryView {
  return !Array.isArray(history)
}
