/**
 * Executing one step's tool calls: `tool/call` as each starts, argument validation,
 * `tools/pre-execute`, the durability barrier, the body, `tools/post-execute`, and `tool/result`s
 * committed strictly in model order. Parallel-safe tools run concurrently up to the cap; an
 * exclusive tool runs alone. Calls start in model order.
 */
import type { Context } from 'cordis'
import { type ContentBlock, createToolResultMessage, type ToolCallBlock, type UserMessage } from 'dsh-llm'
import type { Session, ToolResultError } from 'dsh-session'
import { z } from 'zod'
import { isAbort, untilAborted } from './cancel.ts'
import { AgentLoopErrorCode, describeError, errorCode } from './errors.ts'
import { awaitListeners } from './hooks.ts'
import type { Outbox } from './outbox.ts'
import type { RegisteredTool } from './tools.ts'
import type { ToolOutput, ToolPostExecuteResult, ToolPreExecuteDecision, TurnPosition } from './types.ts'

/** What a tool batch needs from its agent. */
export interface ToolBatchEnv {
  readonly ctx: Context
  readonly session: Session
  readonly outbox: Outbox
  /** The tools this agent offers (the `tools` option), resolved when the batch runs. */
  readonly offered: (name: string) => RegisteredTool | undefined
  /** The most parallel-safe calls running at once. */
  readonly maxConcurrency: number
}

/** How a batch ended. */
export interface ToolBatchOutcome {
  /** A tool returned `concludeTurn: true`. */
  readonly concluded: boolean
}

interface CallOutcome {
  readonly output: ToolOutput
  readonly error?: ToolResultError
  readonly concludeTurn: boolean
  readonly contexts: readonly UserMessage[]
}

function failed(code: string, message: string): CallOutcome {
  return {
    output: { content: [{ type: 'text', text: message }], isError: true },
    error: { code, message },
    concludeTurn: false,
    contexts: [],
  }
}

function callLabel(call: ToolCallBlock): string {
  return `tool "${call.name}" (call ${call.id})`
}

/**
 * Runs `calls` (the step's tool calls, in model order) and commits one `tool/result` for each, in
 * model order; `additionalContexts` go to the outbox at their call's commit. When the turn is
 * cancelled, calls not yet started get a `TOOL_NOT_STARTED` error result without a `tool/call`, and
 * started ones are awaited. Never rejects for a tool's or listener's failure (those become error
 * results); rejects only if an append is refused.
 */
export async function runToolBatch(
  env: ToolBatchEnv,
  position: TurnPosition,
  calls: readonly ToolCallBlock[],
): Promise<ToolBatchOutcome> {
  const { session } = env
  const { signal } = position
  const outcomes: (CallOutcome | undefined)[] = calls.map(() => undefined)
  let nextToStart = 0
  let committed = 0
  let running = 0
  let exclusiveRunning = false
  let concluded = false
  let changed: (() => void) | undefined
  const onAbort = () => changed?.()
  signal.addEventListener('abort', onAbort, { once: true })

  const canStart = (tool: RegisteredTool | undefined): boolean =>
    tool?.info.mode === 'exclusive' ? running === 0 : !exclusiveRunning && running < env.maxConcurrency

  const start = (index: number, call: ToolCallBlock, tool: RegisteredTool | undefined) => {
    const exclusive = tool?.info.mode === 'exclusive'
    running++
    if (exclusive) exclusiveRunning = true
    session.append('tool/call', {
      turn: position.turn,
      step: position.step,
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
    })
    void executeCall(env, position, call, tool).then((outcome) => {
      outcomes[index] = outcome
      running--
      if (exclusive) exclusiveRunning = false
      changed?.()
    })
  }

  try {
    while (committed < calls.length) {
      if (signal.aborted) {
        for (; nextToStart < calls.length; nextToStart++) {
          const call = calls[nextToStart]
          if (call !== undefined) {
            outcomes[nextToStart] = failed(
              AgentLoopErrorCode.TOOL_NOT_STARTED,
              `${callLabel(call)} was not started: the turn was cancelled`,
            )
          }
        }
      }
      let progressed = false
      for (let outcome = outcomes[committed]; outcome !== undefined; outcome = outcomes[committed]) {
        const call = calls[committed]
        if (call === undefined) break
        commit(env, position, call, outcome)
        if (outcome.concludeTurn) concluded = true
        committed++
        progressed = true
      }
      while (nextToStart < calls.length) {
        const call = calls[nextToStart]
        if (call === undefined) break
        const tool = env.offered(call.name)
        if (!canStart(tool)) break
        start(nextToStart++, call, tool)
      }
      if (committed >= calls.length) break
      if (!progressed && running > 0) await new Promise<void>((resolve) => (changed = resolve))
      changed = undefined
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  return { concluded }
}

function commit(env: ToolBatchEnv, position: TurnPosition, call: ToolCallBlock, outcome: CallOutcome): void {
  const message = createToolResultMessage({
    callId: call.id,
    content: outcome.output.content,
    isError: outcome.output.isError,
  })
  const base = { turn: position.turn, step: position.step, message }
  env.session.append('tool/result', outcome.error === undefined ? base : { ...base, error: outcome.error })
  for (const context of outcome.contexts) env.outbox.push(context)
}

async function executeCall(
  env: ToolBatchEnv,
  position: TurnPosition,
  call: ToolCallBlock,
  tool: RegisteredTool | undefined,
): Promise<CallOutcome> {
  try {
    return await executeChecked(env, position, call, tool)
  } catch (error) {
    if (isAbort(error)) {
      return failed(
        AgentLoopErrorCode.TOOL_NOT_STARTED,
        `${callLabel(call)} was not started: the turn was cancelled`,
      )
    }
    return failed(
      errorCode(error, AgentLoopErrorCode.LOOP_FAILED),
      `${callLabel(call)} failed: ${describeError(error)}`,
    )
  }
}

async function executeChecked(
  env: ToolBatchEnv,
  position: TurnPosition,
  call: ToolCallBlock,
  tool: RegisteredTool | undefined,
): Promise<CallOutcome> {
  const { agent, signal } = position
  const label = callLabel(call)
  if (tool === undefined) {
    return failed(AgentLoopErrorCode.UNKNOWN_TOOL, `${label}: no such tool is available to this agent`)
  }
  let json: unknown
  try {
    json = JSON.parse(call.arguments)
  } catch (error) {
    return failed(
      AgentLoopErrorCode.INVALID_TOOL_ARGUMENTS,
      `${label}: arguments are not valid JSON: ${describeError(error)}`,
    )
  }
  const parsed = tool.definition.parameters.safeParse(json)
  if (!parsed.success) {
    return failed(
      AgentLoopErrorCode.INVALID_TOOL_ARGUMENTS,
      `${label}: arguments do not match the schema: ${z.prettifyError(parsed.error)}`,
    )
  }
  const args: unknown = parsed.data
  const input = { ...position, call, tool: tool.info, args }
  const decision: ToolPreExecuteDecision = await awaitListeners('tools/pre-execute', agent, signal, () =>
    env.ctx.waterfall('tools/pre-execute', input, async () => ({ kind: 'allow' }) as const),
  )
  if (decision?.kind === 'deny') {
    return failed(AgentLoopErrorCode.TOOL_DENIED, `${label} was denied: ${String(decision.reason)}`)
  }
  if (decision?.kind !== 'allow') {
    return failed(
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
  let post: ToolPostExecuteResult
  try {
    post = await env.ctx.waterfall('tools/post-execute', { ...input, output }, async () => output)
  } catch (thrown) {
    return failed(
      AgentLoopErrorCode.LISTENER_FAILED,
      `tools/post-execute listener failed for ${label}: ${describeError(thrown)}`,
    )
  }
  if (!isPostResult(post)) {
    return failed(
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
