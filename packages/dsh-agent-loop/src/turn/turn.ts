/**
 * The turn algorithm: claim → session prefix → one `agent/pre-step` decision → `step/start` and the
 * entered batch → model call → tools → outbox drain → `step/end` → continue or stop → `turn/end`.
 * One turn is exactly one execution of this loop.
 */
import {
  type EventBus,
  HarnessError,
  LlmError,
  llmFailure,
  type Message,
  redact,
  type TurnEndReason,
  type UserMessage,
} from 'dsh-llm'
import type { Session } from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode, describeError, errorCode } from '../errors.ts'
import { awaitListeners, listenerFailed } from '../hooks.ts'
import type { ReactLoopInbox } from '../inbox/inbox.ts'
import { checkUserMessage } from '../inbox/message-check.ts'
import type { Outbox } from '../inbox/outbox.ts'
import { callModel, type ModelCallEnv } from '../model/model-call.ts'
import { isAbort, type TurnCancellation, throwIfAborted } from '../timing/cancel.ts'
import { nextSlice, sliceSpent } from '../timing/time-slice.ts'
import { runToolBatch, type ToolBatchEnv } from '../tools/batch.ts'
import type { Agent, PreStepDecision, TurnPosition } from '../types.ts'

/** What a turn needs from its agent. */
export interface TurnHost {
  readonly bus: EventBus
  readonly agent: Agent
  readonly session: Session
  readonly inbox: ReactLoopInbox
  readonly outbox: Outbox
  readonly model: ModelCallEnv
  readonly tools: ToolBatchEnv
  readonly maxSteps: number | undefined
  /**
   * The instance's session prefix: the cached one, or a promise of it while it is composed on
   * first use (which rejects like `composeSessionPrefix`).
   */
  sessionPrefix(signal: AbortSignal): readonly Message[] | Promise<readonly Message[]>
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

/** Ends a step that got its answer: the outbox drains after the complete tool-result batch. */
function closeStep(host: TurnHost, turn: number, step: number): void {
  host.outbox.drain(host.session)
  host.session.append('step/end', { turn, step })
}

async function runSteps(
  host: TurnHost,
  turn: number,
  claimed: readonly UserMessage[],
  signal: AbortSignal,
): Promise<TurnEndReason> {
  const { session, agent } = host
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
    if (step > 1) batch = host.inbox.claim(turn, false)
    // Both are synchronous in the common case (prefix cached, no pre-step listener): no await then.
    const prefix = host.sessionPrefix(signal)
    const sessionPrefix = prefix instanceof Promise ? await prefix : prefix
    const position: TurnPosition = { agent, turn, step, signal }
    const deciding = preStep(host, position, batch, sessionPrefix)
    const decision = deciding instanceof Promise ? await deciding : deciding
    if (decision.kind === 'reject') return BLOCKED
    if (step === 1 && decision.messages.length === 0) return COMPLETED
    session.append('step/start', { turn, step })
    for (const message of decision.messages) session.append('user/message', message)
    if (step === 1 && sliceSpent()) {
      while (sliceSpent()) await nextSlice()
      if (signal.aborted) return ABORTED_SENTINEL
    }
    const outcome = await callModel(host.model, position)
    if (outcome.kind === 'aborted') return ABORTED_SENTINEL
    if (outcome.kind === 'failed') {
      host.report(new LlmError(outcome.failure))
      return Object.freeze({ kind: 'error', failure: outcome.failure })
    }
    const { concluded } =
      outcome.toolCalls.length > 0
        ? await runToolBatch(host.tools, position, outcome.toolCalls)
        : { concluded: false }
    closeStep(host, turn, step)
    if (signal.aborted) return ABORTED_SENTINEL
    if (concluded) return COMPLETED
    if (outcome.finish.kind === 'max-tokens') return MAX_TOKENS
    if (outcome.toolCalls.length === 0 && host.inbox.nextStep.length === 0) {
      if (host.bus.has('agent/turn-stopping')) {
        await awaitListeners('agent/turn-stopping', agent, signal, () =>
          host.bus.serial('agent/turn-stopping', position),
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

/** The step's pre-step decision: synchronous when nobody listens to `agent/pre-step`. */
function preStep(
  host: TurnHost,
  position: TurnPosition,
  messages: readonly UserMessage[],
  sessionPrefix: readonly Message[],
): PreStepDecision | Promise<PreStepDecision> {
  if (!host.bus.has('agent/pre-step')) {
    // Nobody listens: the default decision, with the abort check the await would have made.
    throwIfAborted(position.signal)
    return checkedDecision(position, { kind: 'enter', messages })
  }
  const input = { ...position, messages, sessionPrefix }
  return awaitListeners('agent/pre-step', position.agent, position.signal, () =>
    host.bus.waterfall('agent/pre-step', input, async () => ({ kind: 'enter', messages }) as const),
  ).then((decision: unknown) => checkedDecision(position, decision))
}

function checkedDecision(position: TurnPosition, decision: unknown): PreStepDecision {
  if (decision !== null && typeof decision === 'object') {
    const candidate = decision as { kind?: unknown; messages?: unknown }
    if (candidate.kind === 'reject') return { kind: 'reject' }
    if (candidate.kind === 'enter' && Array.isArray(candidate.messages)) {
      const messages: UserMessage[] = []
      for (const message of candidate.messages as unknown[]) {
        try {
          messages.push(checkUserMessage('agent/pre-step', message))
        } catch (error) {
          throw listenerFailed(
            'agent/pre-step',
            position.agent,
            `entered a bad message: ${describeError(error)}`,
          )
        }
      }
      return { kind: 'enter', messages }
    }
  }
  throw listenerFailed(
    'agent/pre-step',
    position.agent,
    `returned ${JSON.stringify(decision)}, not a pre-step decision`,
  )
}
