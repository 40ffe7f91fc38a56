export { DEFAULT_MAX_STEPS } from './agent.ts'
export { AgentLoopError, AgentLoopErrorCode } from './errors.ts'
export type {} from './events.ts'
export { INBOX_PROJECTION, type Inbox, type InboxEntry, inboxProjection } from './inbox/inbox.ts'
export { AgentLoop, AgentLoop as default } from './service.ts'
export { type RegisteredTool, ToolRegistry } from './tools/registry.ts'
export type { ArgsCheck, ToolArgs, ToolParameters } from './tools/schema.ts'
export { TurnError, type TurnResult } from './turn/result.ts'
export type { TurnStream } from './turn/stream.ts'
export type {
  Agent,
  AgentLoopConfig,
  AgentOptions,
  AgentStatus,
  AgentWarning,
  Awaitable,
  CancelOptions,
  PreStepDecision,
  PreStepInput,
  RequestConfigInput,
  RequestErrorDecision,
  RequestErrorInput,
  ResumeOptions,
  SendOptions,
  SessionPrefixInput,
  SystemPromptInput,
  ToolDefinition,
  ToolExecuteContext,
  ToolInfo,
  ToolMode,
  ToolOutput,
  ToolPostExecuteInput,
  ToolPostExecuteResult,
  ToolPreExecuteDecision,
  ToolPreExecuteInput,
  ToolReturn,
  TurnPosition,
  TurnStoppingInput,
} from './types.ts'
