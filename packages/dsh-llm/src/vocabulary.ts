/**
 * The open vocabularies. Each is an interface keyed by kind; plugins add members by declaration
 * merging (`declare module 'dsh-llm' { interface ContentBlockMap { image: ImageBlock } }`) and the
 * unions below grow with them. Code that switches on these unions must pass unknown kinds through.
 */
import type { LlmFailure } from './errors.ts'
import type { CallId } from './ids.ts'

/** A JSON value: what survives `JSON.stringify` and `JSON.parse` unchanged. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue }

/** A JSON object. */
export type JsonObject = { readonly [key: string]: JsonValue }

/**
 * Replay metadata of a content block, keyed by provider (the AI SDK's provider options key:
 * `anthropic`, `google`, `openai`, `bedrock`, ...): what the provider returned with the block and
 * needs back verbatim on later requests — a reasoning signature, redacted or encrypted reasoning, a
 * thought signature on a tool call, a reasoning item id. Opaque to dsh: it is stored, derived and
 * compared as JSON and never interpreted outside the adapter that wrote it. It lives on the block,
 * so dropping a block drops its metadata. An adapter that cannot send it leaves it out.
 */
export type ProviderData = { readonly [provider: string]: JsonObject }

export interface TextBlock {
  readonly type: 'text'
  readonly text: string
  /** Replay metadata (see `ProviderData`); absent when the provider sent none. */
  readonly providerData?: ProviderData
}
/**
 * The model's reasoning. Redacted reasoning (Anthropic `redacted_thinking`, an encrypted OpenAI
 * reasoning item with no summary) is a reasoning block with empty `text` whose `providerData` holds
 * the opaque data.
 */
export interface ReasoningBlock {
  readonly type: 'reasoning'
  readonly text: string
  /** Replay metadata: a signature, redacted or encrypted data, an item id. */
  readonly providerData?: ProviderData
}
/** A tool call as the model produced it. `arguments` is the raw JSON text, never re-serialized. */
export interface ToolCallBlock {
  readonly type: 'tool-call'
  readonly id: CallId
  readonly name: string
  readonly arguments: string
  /** Replay metadata, e.g. Gemini's thought signature on a function call. */
  readonly providerData?: ProviderData
}
export interface ToolResultBlock {
  readonly type: 'tool-result'
  readonly toolCallId: CallId
  readonly content: readonly ContentBlock[]
  readonly isError?: boolean
}

/** Open: the content block kinds, keyed by `type`. */
export interface ContentBlockMap {
  text: TextBlock
  reasoning: ReasoningBlock
  'tool-call': ToolCallBlock
  'tool-result': ToolResultBlock
}
/** Open union of every content block kind. */
export type ContentBlock = ContentBlockMap[keyof ContentBlockMap]
/** The `type` tag of a content block. */
export type ContentBlockType = keyof ContentBlockMap

/** Open: where a message came from, keyed by `kind`. */
export interface MessageSourceMap {
  user: { readonly kind: 'user' }
  plugin: { readonly kind: 'plugin'; readonly plugin: string }
  model: { readonly kind: 'model'; readonly provider: string; readonly model: string }
  tool: { readonly kind: 'tool'; readonly callId: CallId }
}
/** Open union of message sources. */
export type MessageSource = MessageSourceMap[keyof MessageSourceMap]

/** Open: why a model stream finished, keyed by `kind`. */
export interface FinishReasonMap {
  stop: { readonly kind: 'stop' }
  'tool-calls': { readonly kind: 'tool-calls' }
  'max-tokens': { readonly kind: 'max-tokens' }
  aborted: { readonly kind: 'aborted'; readonly failure: LlmFailure }
  error: { readonly kind: 'error'; readonly failure: LlmFailure }
}
/** Open union of finish reasons. */
export type FinishReason = FinishReasonMap[keyof FinishReasonMap]

/** Open: why a turn ended, keyed by `kind`. `interrupted` is written only by crash repair. */
export interface TurnEndReasonMap {
  completed: { readonly kind: 'completed' }
  'max-tokens': { readonly kind: 'max-tokens' }
  blocked: { readonly kind: 'blocked' }
  aborted: { readonly kind: 'aborted'; readonly cause: string }
  error: { readonly kind: 'error'; readonly failure: LlmFailure }
  interrupted: { readonly kind: 'interrupted' }
}
/** Open union of turn end reasons. */
export type TurnEndReason = TurnEndReasonMap[keyof TurnEndReasonMap]

/** Open: what started a turn, keyed by `kind`. */
export interface TurnTriggerMap {
  /** A waking `send` (or `steer`) found the agent idle. */
  send: { readonly kind: 'send'; readonly target: 'next-turn' | 'next-step' }
  /** The previous turn ended and a queued next-turn message was waiting. */
  queued: { readonly kind: 'queued' }
}
/** Open union of turn triggers. */
export type TurnTrigger = TurnTriggerMap[keyof TurnTriggerMap]
