import { HarnessError } from 'dsh-llm'

/** Stable error codes of the agent loop. Route on these, never on message text. */
export const AgentLoopErrorCode = {
  /** The agent was disposed; it accepts no more input. */
  AGENT_DISPOSED: 'AGENT_DISPOSED',
  /** Another live agent already drives this session. */
  SESSION_BUSY: 'SESSION_BUSY',
  /** Options given to `create`, `resume` or `register` are invalid. */
  INVALID_OPTIONS: 'INVALID_OPTIONS',
  /** An inbox mutation with bad coordinates, an unknown message id or a duplicate id. */
  INVALID_INBOX_MUTATION: 'INVALID_INBOX_MUTATION',
  /** A tool name registered twice. */
  DUPLICATE_TOOL: 'DUPLICATE_TOOL',
  /** A tool result error: the model called a tool that is not registered (or not offered). */
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  /** A tool result error: the arguments are not JSON or do not match the tool's schema. */
  INVALID_TOOL_ARGUMENTS: 'INVALID_TOOL_ARGUMENTS',
  /** A tool result error: a `tools/pre-execute` listener denied the call. */
  TOOL_DENIED: 'TOOL_DENIED',
  /** A tool result error: the tool body threw (or rejected). */
  TOOL_THREW: 'TOOL_THREW',
  /** A tool result error: the tool body returned something that is not a tool result. */
  INVALID_TOOL_RESULT: 'INVALID_TOOL_RESULT',
  /** A tool result error: the body did not settle within its timeout (`timeoutMs`, `toolTimeoutMs`). */
  TOOL_TIMEOUT: 'TOOL_TIMEOUT',
  /** A tool result error: the turn was cancelled and the body did not stop within `abortGraceMs`. */
  TOOL_CANCELLED: 'TOOL_CANCELLED',
  /** A tool result error: the turn was cancelled before the call's body ran. */
  TOOL_NOT_STARTED: 'TOOL_NOT_STARTED',
  /** A listener of an awaited extension point threw or returned an invalid value. */
  LISTENER_FAILED: 'LISTENER_FAILED',
  /** The model stream (an `llm/stream` listener) threw instead of ending with a `finish` chunk. */
  STREAM_THREW: 'STREAM_THREW',
  /** The loop itself failed (a refused append, a storage failure); the turn was closed with `error`. */
  LOOP_FAILED: 'LOOP_FAILED',
  /** A warning (`agent/warning`): the model reported usage numbers the log cannot hold; repaired. */
  INVALID_USAGE: 'INVALID_USAGE',
  /** `send`, `inject` or `steer` was given something that is not a valid user message. */
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  /** An awaited operation was cut short by cancellation. */
  ABORTED: 'ABORTED',
  /** `prompt`: the turn ended `error` (the provider failure or loop failure is the cause). */
  TURN_FAILED: 'TURN_FAILED',
  /** `prompt`: the turn was cancelled, or the prompt was discarded from the inbox before its turn. */
  TURN_CANCELLED: 'TURN_CANCELLED',
  /** `prompt`: an `agent/pre-step` listener rejected the turn. */
  TURN_BLOCKED: 'TURN_BLOCKED',
  /** `prompt`: the turn reached its step limit (`maxSteps`) with work left. */
  STEP_LIMIT: 'STEP_LIMIT',
  /** A plugin the agent loop needs (`LlmRuntime`, `Sessions`, `ToolRegistry`) is not mounted. */
  MISSING_PLUGIN: 'MISSING_PLUGIN',
  /** `create`/`resume`: no adapter is registered for the provider. */
  UNKNOWN_PROVIDER: 'UNKNOWN_PROVIDER',
} as const

/** One of the agent loop's error codes. */
export type AgentLoopErrorCode = (typeof AgentLoopErrorCode)[keyof typeof AgentLoopErrorCode]

/** An error of the agent loop. The message names the agent, session, message or call involved. */
export class AgentLoopError extends HarnessError {
  constructor(code: AgentLoopErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options)
    this.name = 'AgentLoopError'
  }
}

/**
 * A short description of any thrown value, for error messages and failures. Total: a value whose
 * `message` getter, `toJSON` or `toString` throws (or that has no prototype) still gets one.
 */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message)
    if (typeof error === 'string') return error
  } catch {
    return 'an error whose message cannot be read'
  }
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    try {
      return String(error)
    } catch {
      return `a thrown ${typeof error} that cannot be printed`
    }
  }
}

/** The stable code of a thrown value: its `code` when it is a `HarnessError`, else `fallback`. */
export function errorCode(error: unknown, fallback: string): string {
  return error instanceof HarnessError ? error.code : fallback
}
