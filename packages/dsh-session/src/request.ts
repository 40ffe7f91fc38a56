/**
 * The one way a model request is built from a request header and the derived history. The agent
 * loop builds every request through it; the invariants rebuild through it and compare.
 */
import type { LlmRequest, Message, SessionId } from 'dsh-llm'
import { deepFreeze } from 'dsh-llm'
import type { RequestHeader } from './types.ts'

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
 */
export function composeRequest(
  header: RequestHeader,
  history: readonly Message[],
  extras: RequestExtras = {},
): LlmRequest {
  const { config } = header
  const request: { -readonly [K in keyof LlmRequest]: LlmRequest[K] } = {
    provider: config.provider,
    model: config.model,
    messages: [],
  }
  if (config.temperature !== undefined) request.temperature = config.temperature
  if (config.maxTokens !== undefined) request.maxTokens = config.maxTokens
  if (config.reasoningEffort !== undefined) request.reasoningEffort = config.reasoningEffort
  if (config.stop !== undefined) request.stop = deepFreeze(config.stop)
  if (header.system !== undefined && header.system !== '') request.system = header.system
  const prefix = header.messagePrefix ?? []
  request.messages = deepFreeze(prefix.length === 0 ? history : [...prefix, ...history])
  if (header.tools !== undefined && header.tools.length > 0) request.tools = deepFreeze(header.tools)
  if (extras.sessionId !== undefined) request.sessionId = extras.sessionId
  if (extras.signal !== undefined) request.signal = extras.signal
  return Object.freeze(request)
}
