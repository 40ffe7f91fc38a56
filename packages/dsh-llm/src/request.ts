import type { SessionId } from './ids.ts'
import type { Message } from './messages.ts'
import type { StreamChunk } from './stream.ts'

/**
 * Every `ReasoningEffort`, in increasing order: the one list the session schemas, the fast payload
 * checks and the agent loop's option check read.
 */
export const REASONING_EFFORTS = Object.freeze(['low', 'medium', 'high'] as const)

/** How much the model should think before answering, where the provider supports it. */
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number]

/**
 * Prompt caching. `breakpoints: 'auto'` asks an adapter that supports explicit cache breakpoints
 * (Anthropic `cache_control`, Bedrock cache points) to mark the end of the stable prefix (tools,
 * system prompt and the header's `prefixMessages` session-prefix messages), the last message of the
 * previous request (the message before the latest assistant message) and the last message of this
 * request, so each step reads the whole earlier request from cache and writes its own. `ttl` is the
 * provider's cache lifetime where it offers a choice. Adapters without explicit caching ignore it.
 */
export interface CachePolicy {
  readonly breakpoints: 'auto' | 'none'
  readonly ttl?: '5m' | '1h'
  /** How many leading messages are the session prefix; the agent loop records it in the header. */
  readonly prefixMessages?: number
}

/** The scalar part of a model call: which model, and how to sample it. */
export interface LlmCallConfig {
  readonly provider: string
  readonly model: string
  readonly temperature?: number
  readonly maxTokens?: number
  readonly reasoningEffort?: ReasoningEffort
  readonly stop?: readonly string[]
  /** Prompt caching; recorded in the request header, so re-derivation covers it. */
  readonly cachePolicy?: CachePolicy
}

/** A JSON Schema document (an object), as sent to the provider. */
export type JsonSchema = { readonly [key: string]: unknown }

/** A tool as the model sees it. `parameters` is a JSON Schema for the arguments object. */
export interface ToolSchema {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
}

/** Everything one model call needs. Requests built by the agent loop are deep-frozen. */
export interface LlmRequest extends LlmCallConfig {
  readonly system?: string
  readonly messages: readonly Message[]
  readonly tools?: readonly ToolSchema[]
  readonly signal?: AbortSignal
  readonly sessionId?: SessionId
}

/**
 * A provider adapter.
 *
 * Failure contract: `stream` may throw or reject only before yielding its first chunk, and even then
 * the runtime converts the throw into a terminal `finish` chunk. After the first chunk a provider
 * failure must arrive as data — a final `finish {kind: 'error' | 'aborted', failure}` — never as an
 * exception. The adapter must honour `request.signal` by ending with `finish {kind: 'aborted'}`.
 */
export interface LlmAdapter {
  stream(request: LlmRequest): AsyncIterable<StreamChunk>
}
