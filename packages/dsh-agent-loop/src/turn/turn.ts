/**
 * The turn, in the order it runs: claim → session prefix → `agent/pre-step` → `step/start` and the
 * entered batch → request header → durability barrier → request → model call (retried inside the
 * step while `agent/request-error` says so) → tools → post-step (outbox drain, `step/end`) →
 * continue or stop → `turn/end`. One turn is exactly one execution of this loop; each stage is a
 * call into the file of its concept, and none of them calls back into the turn.
 */
import {
  type EventBus,
  HarnessError,
  LlmError,
  llmFailure,
  redact,
  type TurnEndReason,
  type UserMessage,
} from 'dsh-llm'
import type { Session } from 'dsh-session'
import { nextSlice, sliceSpent } from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode, describeError, errorCode } from '../errors.ts'
import { awaitListeners } from '../hooks.ts'
import type { ReactLoopInbox } from '../inbox/inbox.ts'
import type { Outbox } from '../inbox/outbox.ts'
import { prepareHeader } from '../model/header.ts'
import { callModel, type ModelCallEnv, type ModelCallOutcome } from '../model/model-call.ts'
import { buildLoopRequest } from '../model/request.ts'
import { retryDelay } from '../model/retry.ts'
import { durableBarrier } from '../timing/barrier.ts'
import { isAbort, sleep, type TurnCancellation, throwIfAborted } from '../timing/cancel.ts'
import { runToolBatch, type ToolBatchEnv } from '../tools/batch.ts'
import type { Agent, TurnPosition } from '../types.ts'
import { preStep } from './pre-step.ts'
import { type PrefixHolder, sessionPrefix } from './prefix.ts'

/** What a turn needs from its agent. */
export interface TurnHost {
  readonly bus: EventBus
  readonly agent: Agent
  readonly session: Session
  readonly inbox: ReactLoopInbox
  readonly outbox: Outbox
  readonly model: ModelCallEnv & PrefixHolder
  readonly tools: ToolBatchEnv
  readonly maxSteps: number | undefined
  /** Reports a failure on `agent/error`. */
  report(error: HarnessError): void
  /** Called synchronously right after `turn/end` is appended. */
  turnClosed(): void
}

const COMPLETED: TurnEndReason = Object.freeze({ kind: 'completed' })
const BLOCKED: TurnEndReason = Object.freeze({ kind: 'blocked' })
const MAX_TOKENS: TurnEndReason = Object.freeze({ kind: 'max-tokens' })
const ABORTED_SENTINEL: TurnEndReason = Object.freeze({ kind: 'aborted', cause: '' })

/**
 * Runs turn `turn` (already opened by `turn/start`, its first batch already claimed) to its
 * `turn/end`, which it always appends. The reason is `aborted {cause}` whenever the turn was
 * cancelled before it closed. Never rejects unless the log refuses the closing events.
 */
export async function runTurn(
  host: TurnHost,
  turn: number,
  claimed: readonly UserMessage[],
  cancellation: TurnCancellation,
): Promise<TurnEndReason> {
  const { session } = host
  let reason: TurnEndReason
  try {
    reason = await runSteps(host, turn, claimed, cancellation.signal)
  } catch (error) {
    if (isAbort(error) && cancellation.cause !== undefined) {
      reason = ABORTED_SENTINEL
    } else {
      const failure = llmFailure(errorCode(error, AgentLoopErrorCode.LOOP_FAILED), describeError(error))
      host.report(
        error instanceof HarnessError
          ? error
          : new AgentLoopError(AgentLoopErrorCode.LOOP_FAILED, failure.message, { cause: error }),
      )
      reason = Object.freeze({ kind: 'error', failure })
    }
  }
  // A step cut short (cancel, failure) is closed as it stands; staged context then lands between
  // its step/end and turn/end, where it cannot split anything.
  const open = session.openTurn()
  if (open?.step !== undefined) session.append('step/end', { turn, step: open.step })
  host.outbox.drain(session)
  if (cancellation.cause !== undefined) {
    reason = Object.freeze({ kind: 'aborted', cause: redact(cancellation.cause) })
  }
  session.append('turn/end', { turn, reason })
  host.turnClosed()
  return reason
}

async function runSteps(
  host: TurnHost,
  turn: number,
  claimed: readonly UserMessage[],
  signal: AbortSignal,
): Promise<TurnEndReason> {
  const { session, agent, bus } = host
  let batch = claimed
  for (let step = 1; ; step++) {
    // A step start is agent work like a streamed chunk: once the process's slice is spent, the step
    // waits for a later event-loop turn. Many agents woken in one turn (sends in a loop, responses
    // arriving together) then spread their steps out. A later step waits before it claims; the first
    // step's batch was claimed with `turn/start`, so it waits only after logging that batch (below):
    // a wait between the claim and its `user/message` would let a crash or takeover land there and
    // drop the claimed message with the interrupted turn.
    if (step > 1 && sliceSpent()) {
      while (sliceSpent()) await nextSlice()
      throwIfAborted(signal)
    }
    // Claim: the first step's batch came with `turn/start`; a later step takes the steering.
    if (step > 1) batch = host.inbox.claim(turn, false)
    // Session prefix and pre-step: both synchronous in the common case (prefix cached, no pre-step
    // listener), with no await then.
    const prefix = sessionPrefix(host.model, agent, signal)
    const composed = prefix instanceof Promise ? await prefix : prefix
    const position: TurnPosition = { agent, turn, step, signal }
    const deciding = preStep(bus, position, batch, composed)
    const decision = deciding instanceof Promise ? await deciding : deciding
    if (decision.kind === 'reject') return BLOCKED
    if (step === 1 && decision.messages.length === 0) return COMPLETED
    session.append('step/start', { turn, step })
    for (const message of decision.messages) session.append('user/message', message)
    if (step === 1 && sliceSpent()) {
      while (sliceSpent()) await nextSlice()
      if (signal.aborted) return ABORTED_SENTINEL
    }
    // Header → barrier → request → model call, retried inside the step.
    const outcome = await askModel(host.model, position)
    if (outcome.kind === 'aborted') return ABORTED_SENTINEL
    if (outcome.kind === 'failed') {
      host.report(new LlmError(outcome.failure))
      return Object.freeze({ kind: 'error', failure: outcome.failure })
    }
    // Tools, then post-step: the outbox drains after the complete tool-result batch.
    const { concluded } =
      outcome.toolCalls.length > 0
        ? await runToolBatch(host.tools, position, outcome.toolCalls)
        : { concluded: false }
    host.outbox.drain(session)
    session.append('step/end', { turn, step })
    // Continue or stop.
    if (signal.aborted) return ABORTED_SENTINEL
    if (concluded) return COMPLETED
    if (outcome.finish.kind === 'max-tokens') return MAX_TOKENS
    if (outcome.toolCalls.length === 0 && host.inbox.nextStep.length === 0) {
      if (bus.has('agent/turn-stopping')) {
        await awaitListeners('agent/turn-stopping', agent, signal, () =>
          bus.serial('agent/turn-stopping', position),
        )
      } else {
        throwIfAborted(signal)
      }
      if (host.inbox.nextStep.length === 0) return COMPLETED
    }
    if (host.maxSteps !== undefined && step >= host.maxSteps) {
      return Object.freeze({ kind: 'max-steps', limit: host.maxSteps })
    }
  }
}

/**
 * The step's model call: the header (`request/header` when owed), the durability barrier, the
 * request built from the log, the streamed answer; a failed attempt is retried while
 * `agent/request-error` says so (each retry logged as `request/retry`, then its delay waited out).
 * Rejects only for a failing extension point (`LISTENER_FAILED`), a refused append, or the abort
 * error while awaiting something other than the stream.
 */
async function askModel(model: ModelCallEnv, position: TurnPosition): Promise<ModelCallOutcome> {
  for (let attempt = 1; ; attempt++) {
    const preparing = prepareHeader(model, position, model.firstRequest)
    if (preparing !== undefined) await preparing
    model.firstRequest = false
    const barrier = durableBarrier(model.session, position.signal)
    if (barrier !== undefined) await barrier
    const request = buildLoopRequest(model.session, position)
    const outcome = await callModel(model, position, request)
    if (outcome.kind !== 'failed') return outcome
    const delayMs = await retryDelay(model, position, outcome.failure, attempt)
    if (delayMs === undefined) return outcome
    await sleep(delayMs, position.signal)
  }
}
