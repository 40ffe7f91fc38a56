export { BlockAssembler, type BlockAssemblerOptions } from './assembler.ts'
export { assertNever } from './assert.ts'
export { HarnessError, LlmError, LlmErrorCode, type LlmFailure, llmFailure } from './errors.ts'
export { type EventBus, eventBus, type ListenerErrorHandler } from './event-bus.ts'
export { type DeepReadonly, deepFreeze, frozenCopy } from './freeze.ts'
export {
  type Brand,
  CallId,
  MessageId,
  newCallId,
  newMessageId,
  newSessionId,
  SessionId,
} from './ids.ts'
export {
  type AssistantMessage,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  isToolResultMessage,
  type Message,
  messageText,
  type ToolResultMessage,
  type UserMessage,
  userText,
} from './messages.ts'
export { emitContained } from './notify.ts'
export {
  type JsonSchema,
  type LlmAdapter,
  type LlmCallConfig,
  type LlmRequest,
  REASONING_EFFORTS,
  type ReasoningEffort,
  type ToolSchema,
} from './request.ts'
export {
  currentLoopStep,
  type LoopRequestMark,
  type LoopStepScope,
  type LoopStepStreamer,
  loopRequestMark,
  markLoopRequest,
  outsideLoopStep,
  streamInLoopStep,
  trackLoopSteps,
} from './request-mark.ts'
export { type RetryOptions, type RetryPolicy, resolveRetryPolicy } from './retry.ts'
export { type AdapterGuard, LlmRuntime, LlmRuntime as default } from './runtime.ts'
export type { StreamChunk, StreamChunkType, Usage } from './stream.ts'
export { StreamListenerError, streamListenerOf } from './stream-listeners.ts'
export {
  isHighSurrogate,
  isWellFormed,
  REPLACEMENT_CHARACTER,
  wellFormed,
  wellFormedJson,
} from './unicode.ts'
export { untraced } from './untraced.ts'
export type {
  ContentBlock,
  ContentBlockMap,
  ContentBlockType,
  FinishReason,
  FinishReasonMap,
  MessageSource,
  MessageSourceMap,
  ReasoningBlock,
  TextBlock,
  ToolCallBlock,
  ToolResultBlock,
  TurnEndReason,
  TurnEndReasonMap,
  TurnTrigger,
  TurnTriggerMap,
} from './vocabulary.ts'
