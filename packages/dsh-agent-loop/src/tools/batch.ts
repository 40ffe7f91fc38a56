/**
 * Executing one step's tool calls: `tool/call` as each starts, then (see `tool-call.ts`) the call
 * itself, and `tool/result`s committed strictly in model order. Parallel-safe tools run
 * concurrently up to the cap; an exclusive tool runs alone. Calls start in model order.
 */
import { createToolResultMessage, type EventBus, type ToolCallBlock } from 'dsh-llm'
import type { Session } from 'dsh-session'
import { AgentLoopErrorCode } from '../errors.ts'
import type { Outbox } from '../inbox/outbox.ts'
import { abortWatchers } from '../timing/cancel.ts'
import type { TurnPosition } from '../types.ts'
import { type CallOutcome, callLabel, executeCall, failedCall } from './call.ts'
import type { RegisteredTool, ToolRegistry } from './registry.ts'

/** What a tool batch needs from its agent. */
export interface ToolBatchEnv {
  readonly bus: EventBus
  readonly session: Session
  readonly outbox: Outbox
  readonly registry: ToolRegistry
  /** The names of the tools this agent offers (the `tools` option); `undefined` offers every tool. */
  readonly toolNames: readonly string[] | undefined
  /** The most parallel-safe calls running at once. */
  readonly maxConcurrency: number
  readonly toolTimeoutMs: number
  readonly abortGraceMs: number
}

/** How a batch ended. */
export interface ToolBatchOutcome {
  /** A tool returned `concludeTurn: true`. */
  readonly concluded: boolean
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
  const watching = abortWatchers(signal)
  watching.add(onAbort)

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
            outcomes[nextToStart] = failedCall(
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
        const tool = offered(env, call.name)
        if (!canStart(tool)) break
        start(nextToStart++, call, tool)
      }
      if (committed >= calls.length) break
      if (!progressed && running > 0) await new Promise<void>((resolve) => (changed = resolve))
      changed = undefined
    }
  } finally {
    watching.delete(onAbort)
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

/** `registry.select(toolNames)` narrowed to one name, without building the list for every call. */
function offered(env: ToolBatchEnv, name: string): RegisteredTool | undefined {
  return env.toolNames === undefined || env.toolNames.includes(name) ? env.registry.get(name) : undefined
}
