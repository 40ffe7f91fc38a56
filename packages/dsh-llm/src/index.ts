export { assertNever } from './assert.ts'
export { type ListenerErrorHandler, emitContained } from './notify.ts'
export { HarnessError, LlmError, LlmErrorCode, type LlmFailure, llmFailure } from './errors.ts'
export { type DeepReadonly, deepFreeze, frozenCopy } from './freeze.ts'
export {
  type Brand,
  CallId,
  MessageId,
  SessionId,
  newCallId,
  newMessageId,
  newSessionId,
} from './ids.ts'
export {
  type AssistantMessage,
  type Message,
  type ToolResultMessage,
  type UserMessage,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  isToolResultMessage,
  messageText,
  userText,
} from './messages.ts'
export type {
  JsonSchema,
  LlmAdapter,
  LlmCallConfig,
  LlmRequest,
  ReasoningEffort,
  ToolSchema,
} from './request.ts'
export { type LoopRequestMark, loopRequestMark, markLoopRequest } from './request-mark.ts'
export type { StreamChunk, StreamChunkType, Usage } from './stream.ts'
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
