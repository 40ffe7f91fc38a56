export {
  type Deltas,
  errorResponse,
  type ResponseOptions,
  reasoningResponse,
  type ScriptedToolCall,
  textBlockChunks,
  textResponse,
  toolCallChunks,
  toolCallResponse,
  toolCallsResponse,
} from './responses.ts'
export {
  type DelayedStep,
  type HangStep,
  hangUntilAborted,
  type ScriptChunks,
  type ScriptedAdapter,
  type ScriptStep,
  scriptedAdapter,
  type ThrowStep,
  throwAfter,
} from './scripted-adapter.ts'
