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
  setIdSource,
} from './ids.ts'
export { isRecord } from './json-record.ts'
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
  isSecretHeader,
  MIN_SECRET_LENGTH,
  REDACTED,
  redact,
  redactError,
  redactFailure,
  registerSecret,
  registerUrlSecrets,
  SECRET_HEADERS,
  SECRET_QUERY_PARAMETERS,
} from './redact.ts'
export type {
  CachePolicy,
  JsonSchema,
  LlmAdapter,
  LlmCallConfig,
  LlmRequest,
  ReasoningEffort,
  ToolSchema,
} from './request.ts'
export { REASONING_EFFORTS } from './request.ts'
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
export { checkChunks, type StreamCheck } from './stream-check.ts'
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
  JsonObject,
  JsonValue,
  MessageSource,
  MessageSourceMap,
  ProviderData,
  ReasoningBlock,
  TextBlock,
  ToolCallBlock,
  ToolResultBlock,
  TurnEndReason,
  TurnEndReasonMap,
  TurnTrigger,
  TurnTriggerMap,
} from './vocabulary.ts'
