/**
 * Executing one tool call: argument validation, `tools/pre-execute`, the durability barrier, the
 * body, `tools/post-execute`. Every failure becomes an error outcome; nothing here throws.
 */
import {
  type ContentBlock,
  type EventBus,
  redact,
  type ToolCallBlock,
  type UserMessage,
  wellFormed,
  wellFormedJson,
} from 'dsh-llm'
import type { Session, ToolResultError } from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode, describeError, errorCode } from '../errors.ts'
import { awaitListeners } from '../hooks.ts'
import { checkUserMessage } from '../inbox/message-check.ts'
import { durableBarrier } from '../timing/barrier.ts'
import { abortWatchers, isAbort, throwIfAborted } from '../timing/cancel.ts'
import { runBounded, type Settled } from '../timing/settle.ts'
import type {
  ToolExecuteContext,
  ToolOutput,
  ToolPostExecuteResult,
  ToolPreExecuteDecision,
  ToolPreExecuteInput,
  TurnPosition,
} from '../types.ts'
import { checkOutput, describeReturn } from './output.ts'
import type { RegisteredTool } from './registry.ts'

/** What executing a call needs from its agent. */
export interface ToolCallEnv {
  readonly bus: EventBus
  readonly session: Session
  /** The timeout of a tool without its own `timeoutMs`, ms (`Infinity` for none). */
  readonly toolTimeoutMs: number
  /** How long a cancelled call's body (and post-processing) may take to stop, ms. */
  readonly abortGraceMs: number
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

/** An error outcome with `code` whose text (for the model and the log) is `message`, redacted. */
export function failedCall(code: string, raw: string): CallOutcome {
  const message = redact(raw)
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
export function executeCall(
  env: ToolCallEnv,
  position: TurnPosition,
  call: ToolCallBlock,
  tool: RegisteredTool | undefined,
): Promise<CallOutcome> {
  // A rejection handler rather than an async wrapper awaiting the call: the same ticks, one async
  // frame fewer per tool call. `executeChecked` is async, so it never throws synchronously.
  return executeChecked(env, position, call, tool).then(undefined, (error: unknown) => {
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
  })
}

async function executeChecked(
  env: ToolCallEnv,
  position: TurnPosition,
  call: ToolCallBlock,
  tool: RegisteredTool | undefined,
): Promise<CallOutcome> {
  const { agent, signal } = position
  if (tool === undefined) {
    return failedCall(
      AgentLoopErrorCode.UNKNOWN_TOOL,
      `${callLabel(call)}: no such tool is available to this agent`,
    )
  }
  let json: unknown
  try {
    // Well-formed JSON text may still escape a lone surrogate (`"\ud83d"`); the tool gets U+FFFD.
    json = wellFormedJson(JSON.parse(call.arguments))
  } catch (error) {
    return failedCall(
      AgentLoopErrorCode.INVALID_TOOL_ARGUMENTS,
      `${callLabel(call)}: arguments are not valid JSON: ${describeError(error)} (arguments: ${quotePrefix(call.arguments)})`,
    )
  }
  const checking = tool.check(json)
  const checked = checking instanceof Promise ? await checking : checking
  if (!checked.ok) {
    return failedCall(
      AgentLoopErrorCode.INVALID_TOOL_ARGUMENTS,
      `${callLabel(call)}: arguments do not match the schema: ${checked.problems}`,
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
    return failedCall(
      AgentLoopErrorCode.TOOL_DENIED,
      `${callLabel(call)} was denied: ${String(decision.reason)}`,
    )
  }
  if (decision?.kind !== 'allow') {
    return failedCall(
      AgentLoopErrorCode.LISTENER_FAILED,
      `${callLabel(call)}: tools/pre-execute returned ${JSON.stringify(decision)}, not allow or deny`,
    )
  }
  const barrier = durableBarrier(env.session, signal)
  if (barrier !== undefined) await barrier
  const timeoutMs = tool.definition.timeoutMs ?? env.toolTimeoutMs
  const running = runBody(env, position, call, tool, args, timeoutMs)
  const body = running instanceof Promise ? await running : running
  if (body.kind === 'timeout') {
    return failedCall(AgentLoopErrorCode.TOOL_TIMEOUT, `${callLabel(call)} timed out after ${timeoutMs} ms`)
  }
  if (body.kind === 'abandoned') return abandoned(env, call)
  let output: ToolOutput
  let concludeTurn = false
  let error: ToolResultError | undefined
  if (body.kind === 'threw') {
    const message = redact(`${callLabel(call)} threw: ${describeError(body.error)}`)
    error = { code: AgentLoopErrorCode.TOOL_THREW, message }
    output = { content: [{ type: 'text', text: message }], isError: true }
  } else {
    const normalized = normalizeReturn(body.value)
    if (normalized === undefined) {
      return failedCall(
        AgentLoopErrorCode.INVALID_TOOL_RESULT,
        `${callLabel(call)} returned ${describeReturn(body.value)}, not a tool result`,
      )
    }
    const checked = normalized.plain
      ? { ok: true as const, output: normalized.output }
      : checkOutput(normalized.output)
    if (!checked.ok) {
      return failedCall(
        AgentLoopErrorCode.INVALID_TOOL_RESULT,
        `${callLabel(call)} returned a bad result: ${checked.problem}`,
      )
    }
    output = checked.output
    concludeTurn = normalized.concludeTurn
  }
  // The body ran, so its result is real: post-processing (a redaction, say) runs to completion even
  // when the turn is cancelled meanwhile — within the grace period. Listeners see the aborted
  // signal and may hurry.
  let post: unknown = output
  if (env.bus.has('tools/post-execute')) {
    const base = input ?? { ...position, call, tool: tool.info, args }
    const settled = await runBounded(
      () => env.bus.waterfall('tools/post-execute', { ...base, output }, async () => output),
      { signal, timeoutMs: Number.POSITIVE_INFINITY, graceMs: env.abortGraceMs },
    )
    if (settled.kind === 'abandoned') return abandoned(env, call, 'tools/post-execute for ')
    if (settled.kind === 'threw') {
      return failedCall(
        AgentLoopErrorCode.LISTENER_FAILED,
        `tools/post-execute listener failed for ${callLabel(call)}: ${describeError(settled.error)}`,
      )
    }
    if (settled.kind === 'value') post = settled.value
  }
  if (!isPostResult(post)) {
    return failedCall(
      AgentLoopErrorCode.LISTENER_FAILED,
      `${callLabel(call)}: tools/post-execute returned ${describeReturn(post)}, not a tool output`,
    )
  }
  let final = output
  if (post !== output) {
    const checked = checkOutput(post)
    if (!checked.ok) {
      return failedCall(
        AgentLoopErrorCode.LISTENER_FAILED,
        `${callLabel(call)}: tools/post-execute returned a bad result: ${checked.problem}`,
      )
    }
    final = checked.output
  }
  let contexts: readonly UserMessage[] = []
  if (post.additionalContexts !== undefined && post.additionalContexts.length > 0) {
    try {
      contexts = post.additionalContexts.map((context) => checkUserMessage('tools/post-execute', context))
    } catch (thrown) {
      return failedCall(
        AgentLoopErrorCode.LISTENER_FAILED,
        `${callLabel(call)}: tools/post-execute returned a bad additional context: ${describeError(thrown)}`,
      )
    }
  }
  const result: CallOutcome = { output: final, concludeTurn, contexts }
  return error === undefined ? result : { ...result, error }
}

/**
 * The call's own signal, made only if the body reads it: most bodies never do, and an
 * AbortController per call is measurable on the step path. Aborted when the turn is cancelled or
 * the timeout fires (`timeoutReason` set first).
 */
class CallSignal {
  controller: AbortController | undefined
  timeoutReason: AgentLoopError | undefined
  constructor(readonly turnSignal: AbortSignal) {}

  readonly forward = (): void => {
    this.controller?.abort(this.turnSignal.reason)
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = new AbortController()
      this.controller = controller
      if (this.timeoutReason !== undefined) controller.abort(this.timeoutReason)
      else if (this.turnSignal.aborted) controller.abort(this.turnSignal.reason)
      else abortWatchers(this.turnSignal).add(this.forward)
    }
    return this.controller.signal
  }
}

/** Where a tool context's `signal` getter finds its `CallSignal`: hidden, so no spread or key list sees it. */
const CALL_SIGNAL = Symbol('dsh-agent-loop.call-signal')

/**
 * The `signal` accessor of every tool context: one getter shared by all of them (a getter made per
 * call would turn each context into a slow dictionary object), reading the context's `CallSignal`.
 */
const SIGNAL: PropertyDescriptor = Object.freeze({
  get(this: { readonly [CALL_SIGNAL]?: CallSignal }): AbortSignal | undefined {
    return this[CALL_SIGNAL]?.signal
  },
  enumerable: true,
  configurable: true,
})

/** `{signal, callId, agent}`, in that key order, `signal` made on first read. */
function executeContext(call: ToolCallBlock, position: TurnPosition, state: CallSignal): ToolExecuteContext {
  const context = {} as { -readonly [K in keyof ToolExecuteContext]: ToolExecuteContext[K] }
  Object.defineProperty(context, 'signal', SIGNAL)
  context.callId = call.id
  context.agent = position.agent
  Object.defineProperty(context, CALL_SIGNAL, { value: state })
  return context
}

/**
 * Runs the body with a signal of its own: aborted when the turn is cancelled or the timeout fires.
 * After a cancel the body has `abortGraceMs` to settle before it is abandoned.
 */
function runBody(
  env: ToolCallEnv,
  position: TurnPosition,
  call: ToolCallBlock,
  tool: RegisteredTool,
  args: unknown,
  timeoutMs: number,
): Settled<unknown> | Promise<Settled<unknown>> {
  const turnSignal = position.signal
  const state = new CallSignal(turnSignal)
  const context = executeContext(call, position, state)
  return runBounded<unknown>(() => tool.definition.execute(args, context), {
    signal: turnSignal,
    timeoutMs,
    graceMs: env.abortGraceMs,
    onTimeout: () => {
      state.timeoutReason = new AgentLoopError(
        AgentLoopErrorCode.TOOL_TIMEOUT,
        `${callLabel(call)} timed out after ${timeoutMs} ms`,
      )
      state.controller?.abort(state.timeoutReason)
    },
    onEnd: () => {
      if (state.controller !== undefined && !turnSignal.aborted)
        abortWatchers(turnSignal).delete(state.forward)
    },
  })
}

/** How many characters of a bad argument string an error result quotes. */
const QUOTED_ARGUMENTS = 200

/** `text` as a JSON string literal, cut to its first `QUOTED_ARGUMENTS` characters (with its length then). */
function quotePrefix(text: string): string {
  if (text.length <= QUOTED_ARGUMENTS) return JSON.stringify(text)
  return `${JSON.stringify(`${text.slice(0, QUOTED_ARGUMENTS)}…`)} (${text.length} characters)`
}

function abandoned(env: ToolCallEnv, call: ToolCallBlock, what = ''): CallOutcome {
  return failedCall(
    AgentLoopErrorCode.TOOL_CANCELLED,
    `${what}${callLabel(call)} did not stop within ${env.abortGraceMs} ms of the cancel; its result is abandoned`,
  )
}

function isBlocks(value: unknown): value is readonly ContentBlock[] {
  return (
    Array.isArray(value) &&
    value.every((block) => block !== null && typeof block === 'object' && typeof block.type === 'string')
  )
}

/** A normalized return; `plain` when it is known to pass `checkOutput` unchanged (a well-formed string). */
interface Normalized {
  readonly output: ToolOutput
  readonly concludeTurn: boolean
  readonly plain: boolean
}

function normalizeReturn(value: unknown): Normalized | undefined {
  if (typeof value === 'string') {
    const text = wellFormed(value)
    return { output: { content: [{ type: 'text', text }], isError: false }, concludeTurn: false, plain: true }
  }
  if (isBlocks(value))
    return { output: { content: value, isError: false }, concludeTurn: false, plain: false }
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
  return {
    output: { content: blocks, isError: isError === true },
    concludeTurn: concludeTurn === true,
    plain: false,
  }
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
