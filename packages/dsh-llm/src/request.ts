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

/** The scalar part of a model call: which model, and how to sample it. */
export interface LlmCallConfig {
  readonly provider: string
  readonly model: string
  readonly temperature?: number
  readonly maxTokens?: number
  readonly reasoningEffort?: ReasoningEffort
  readonly stop?: readonly string[]
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
