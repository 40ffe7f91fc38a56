/**
 * Executing one tool call: argument validation, `tools/pre-execute`, the durability barrier, the
 * body, `tools/post-execute`. Every failure becomes an error outcome; nothing here throws.
 */
import type { ContentBlock, EventBus, ToolCallBlock, UserMessage } from 'dsh-llm'
import type { Session, ToolResultError } from 'dsh-session'
import { isAbort, throwIfAborted, untilAborted } from './cancel.ts'
import { AgentLoopErrorCode, describeError, errorCode } from './errors.ts'
import { awaitListeners } from './hooks.ts'
import type { RegisteredTool } from './tools.ts'
import type {
  ToolOutput,
  ToolPostExecuteResult,
  ToolPreExecuteDecision,
  ToolPreExecuteInput,
  TurnPosition,
} from './types.ts'

/** What executing a call needs from its agent. */
export interface ToolCallEnv {
  readonly bus: EventBus
  readonly session: Session
}

/** How one call ended: what the model will see, plus what the loop does with it. */
export interface CallOutcome {
  readonly output: ToolOutput
  /** Set when the harness (not the tool) failed the call; recorded as `tool/result.error`. */
  readonly error?: ToolResultError
  readonly concludeTurn: boolean
  /** `additionalContexts` from `tools/post-execute`, for the outbox. */
  readonly contexts: readonly UserMessage[]
}

const ALLOW: ToolPreExecuteDecision = Object.freeze({ kind: 'allow' })

/** An error outcome with `code` whose text (for the model and the log) is `message`. */
export function failedCall(code: string, message: string): CallOutcome {
  return {
    output: { content: [{ type: 'text', text: message }], isError: true },
    error: { code, message },
    concludeTurn: false,
    contexts: [],
  }
}

/** How calls are named in messages: `tool "name" (call id)`. */
export function callLabel(call: ToolCallBlock): string {
  return `tool "${call.name}" (call ${call.id})`
}

/**
 * Executes `call` with `tool` (undefined when the agent offers no such tool). Resolves with the
 * outcome; never rejects. A cancel before the body runs gives `TOOL_NOT_STARTED`; once the body
 * ran, its post-processing completes even if the turn is cancelled meanwhile.
 */
export async function executeCall(
  env: ToolCallEnv,
  position: TurnPosition,
  call: ToolCallBlock,
  tool: RegisteredTool | undefined,
): Promise<CallOutcome> {
  try {
    return await executeChecked(env, position, call, tool)
  } catch (error) {
    if (isAbort(error)) {
      return failedCall(
        AgentLoopErrorCode.TOOL_NOT_STARTED,
        `${callLabel(call)} was not started: the turn was cancelled`,
      )
    }
    return failedCall(
      errorCode(error, AgentLoopErrorCode.LOOP_FAILED),
      `${callLabel(call)} failed: ${describeError(error)}`,
    )
  }
}

async function executeChecked(
  env: ToolCallEnv,
  position: TurnPosition,
  call: ToolCallBlock,
  tool: RegisteredTool | undefined,
): Promise<CallOutcome> {
  const { agent, signal } = position
  const label = callLabel(call)
  if (tool === undefined) {
    return failedCall(AgentLoopErrorCode.UNKNOWN_TOOL, `${label}: no such tool is available to this agent`)
  }
  let json: unknown
  try {
    json = JSON.parse(call.arguments)
  } catch (error) {
    return failedCall(
      AgentLoopErrorCode.INVALID_TOOL_ARGUMENTS,
      `${label}: arguments are not valid JSON: ${describeError(error)}`,
    )
  }
  const checking = tool.check(json)
  const checked = checking instanceof Promise ? await checking : checking
  if (!checked.ok) {
    return failedCall(
      AgentLoopErrorCode.INVALID_TOOL_ARGUMENTS,
      `${label}: arguments do not match the schema: ${checked.problems}`,
    )
  }
  const args: unknown = checked.value
  // Listener inputs are built only when someone listens; `tools/post-execute` sees what
  // `tools/pre-execute` listeners saw (and any change they made to it).
  let input: ToolPreExecuteInput | undefined
  let decision: ToolPreExecuteDecision = ALLOW
  if (env.bus.has('tools/pre-execute')) {
    input = { ...position, call, tool: tool.info, args }
    const pre = input
    decision = await awaitListeners('tools/pre-execute', agent, signal, () =>
      env.bus.waterfall('tools/pre-execute', pre, async () => ({ kind: 'allow' }) as const),
    )
  } else {
    throwIfAborted(signal)
  }
  if (decision?.kind === 'deny') {
    return failedCall(AgentLoopErrorCode.TOOL_DENIED, `${label} was denied: ${String(decision.reason)}`)
  }
  if (decision?.kind !== 'allow') {
    return failedCall(
      AgentLoopErrorCode.LISTENER_FAILED,
      `${label}: tools/pre-execute returned ${JSON.stringify(decision)}, not allow or deny`,
    )
  }
  await untilAborted(env.session.flush(), signal)
  let output: ToolOutput
  let concludeTurn = false
  let error: ToolResultError | undefined
  try {
    const returned: unknown = await tool.definition.execute(args, { signal, callId: call.id, agent })
    const normalized = normalizeReturn(returned)
    if (normalized === undefined) {
      const message = `${label} returned ${JSON.stringify(returned) ?? String(returned)}, not a tool result`
      error = { code: AgentLoopErrorCode.INVALID_TOOL_RESULT, message }
      output = { content: [{ type: 'text', text: message }], isError: true }
    } else {
      output = normalized.output
      concludeTurn = normalized.concludeTurn
    }
  } catch (thrown) {
    const message = `${label} threw: ${describeError(thrown)}`
    error = { code: AgentLoopErrorCode.TOOL_THREW, message }
    output = { content: [{ type: 'text', text: message }], isError: true }
  }
  // The body ran, so its result is real: post-processing (a redaction, say) runs to completion even
  // when the turn is cancelled meanwhile. Listeners see the aborted signal and may hurry.
  let post: ToolPostExecuteResult = output
  try {
    if (env.bus.has('tools/post-execute')) {
      const base = input ?? { ...position, call, tool: tool.info, args }
      post = await env.bus.waterfall('tools/post-execute', { ...base, output }, async () => output)
    }
  } catch (thrown) {
    return failedCall(
      AgentLoopErrorCode.LISTENER_FAILED,
      `tools/post-execute listener failed for ${label}: ${describeError(thrown)}`,
    )
  }
  if (!isPostResult(post)) {
    return failedCall(
      AgentLoopErrorCode.LISTENER_FAILED,
      `${label}: tools/post-execute returned ${JSON.stringify(post)}, not a tool output`,
    )
  }
  const result: CallOutcome = {
    output: { content: post.content, isError: post.isError },
    concludeTurn,
    contexts: post.additionalContexts ?? [],
  }
  return error === undefined ? result : { ...result, error }
}

function isBlocks(value: unknown): value is readonly ContentBlock[] {
  return (
    Array.isArray(value) &&
    value.every((block) => block !== null && typeof block === 'object' && typeof block.type === 'string')
  )
}

function normalizeReturn(value: unknown): { output: ToolOutput; concludeTurn: boolean } | undefined {
  if (typeof value === 'string')
    return { output: { content: [{ type: 'text', text: value }], isError: false }, concludeTurn: false }
  if (isBlocks(value)) return { output: { content: value, isError: false }, concludeTurn: false }
  if (value === null || typeof value !== 'object') return undefined
  const { content, isError, concludeTurn } = value as {
    content?: unknown
    isError?: unknown
    concludeTurn?: unknown
  }
  const blocks: readonly ContentBlock[] | undefined =
    typeof content === 'string' ? [{ type: 'text', text: content }] : isBlocks(content) ? content : undefined
  if (blocks === undefined) return undefined
  if (isError !== undefined && typeof isError !== 'boolean') return undefined
  if (concludeTurn !== undefined && typeof concludeTurn !== 'boolean') return undefined
  return { output: { content: blocks, isError: isError === true }, concludeTurn: concludeTurn === true }
}

function isPostResult(value: unknown): value is ToolPostExecuteResult {
  if (value === null || typeof value !== 'object') return false
  const { content, isError, additionalContexts } = value as {
    content?: unknown
    isError?: unknown
    additionalContexts?: unknown
  }
  if (!isBlocks(content) || typeof isError !== 'boolean') return false
  if (additionalContexts === undefined) return true
  return (
    Array.isArray(additionalContexts) &&
    additionalContexts.every(
      (message) =>
        message !== null &&
        typeof message === 'object' &&
        message.role === 'user' &&
        typeof message.id === 'string',
    )
  )
}
