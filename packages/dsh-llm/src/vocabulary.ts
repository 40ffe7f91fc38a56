/**
 * The open vocabularies. Each is an interface keyed by kind; plugins add members by declaration
 * merging (`declare module 'dsh-llm' { interface ContentBlockMap { image: ImageBlock } }`) and the
 * unions below grow with them. Code that switches on these unions must pass unknown kinds through.
 */
import type { LlmFailure } from './errors.ts'
import type { CallId } from './ids.ts'

export interface TextBlock {
  readonly type: 'text'
  readonly text: string
}
export interface ReasoningBlock {
  readonly type: 'reasoning'
  readonly text: string
}
/** A tool call as the model produced it. `arguments` is the raw JSON text, never re-serialized. */
export interface ToolCallBlock {
  readonly type: 'tool-call'
  readonly id: CallId
  readonly name: string
  readonly arguments: string
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
