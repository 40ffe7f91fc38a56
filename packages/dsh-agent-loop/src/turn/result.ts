/** What a finished turn amounts to (`TurnResult`), read back from the log, and the error of a turn that did not complete. */
import {
  type AssistantMessage,
  type HarnessError,
  LlmError,
  messageText,
  type SessionId,
  type TurnEndReason,
  type Usage,
} from 'dsh-llm'
import type { Session } from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode } from '../errors.ts'

/** The outcome of one turn, as `agent.prompt` resolves it. */
export interface TurnResult {
  readonly sessionId: SessionId
  /** The turn number in the session. */
  readonly turn: number
  /** The last complete assistant message of the turn; `undefined` when no model call answered. */
  readonly message: AssistantMessage | undefined
  /** The text blocks of `message`, joined (`''` when there is none). */
  readonly text: string
  /** Token counts summed over every model call of the turn (zero when none reported usage). */
  readonly usage: Usage
  /** The turn's `turn/end` reason. */
  readonly stopReason: TurnEndReason
  /** How many steps the turn took. */
  readonly steps: number
}

/**
 * Reads turn `turn` of `session` back from its log: the turn must have just closed (its `turn/end`
 * is the last turn event). Scans backwards from the end to the turn's `turn/start`.
 */
export function readTurnResult(session: Session, turn: number, stopReason: TurnEndReason): TurnResult {
  let message: AssistantMessage | undefined
  let steps = 0
  let input = 0
  let output = 0
  const extra: { cacheReadTokens?: number; cacheWriteTokens?: number; reasoningTokens?: number } = {}
  for (let i = session.seq - 1; i >= 0; i--) {
    // A step's chunks say nothing the answer does not: passed over without being rebuilt.
    if (session.eventTypeAt(i) === 'assistant/chunk') continue
    const event = session.eventAt(i)
    if (event === undefined) break
    if (event.type === 'turn/start' && event.data.turn === turn) break
    if (event.type === 'step/start' && event.data.turn === turn) steps++
    if (event.type !== 'assistant/message' || event.data.turn !== turn) continue
    const { usage } = event.data
    if (message === undefined && event.data.interrupted !== true) message = event.data.message
    if (usage === undefined) continue
    input += usage.inputTokens
    output += usage.outputTokens
    for (const key of ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
      const value = usage[key]
      if (value !== undefined) extra[key] = (extra[key] ?? 0) + value
    }
  }
  return Object.freeze({
    sessionId: session.id,
    turn,
    message,
    text: message === undefined ? '' : messageText(message),
    usage: Object.freeze({ inputTokens: input, outputTokens: output, ...extra }),
    stopReason,
    steps,
  })
}

/**
 * A prompted turn that did not complete: `TURN_FAILED` (ended `error`, or a reason a plugin added),
 * `TURN_CANCELLED` (ended `aborted`, or its prompt was discarded before its turn opened),
 * `TURN_BLOCKED` (an `agent/pre-step` listener rejected it), `STEP_LIMIT` (ended `max-steps`).
 * `result` is the turn as far as it got; `cause` is the reported error when there was one.
 */
export class TurnError extends AgentLoopError {
  readonly result: TurnResult | undefined

  constructor(
    code: AgentLoopErrorCode,
    message: string,
    result: TurnResult | undefined,
    options?: { cause?: unknown },
  ) {
    super(code, message, options)
    this.name = 'TurnError'
    this.result = result
  }
}

/**
 * The error for a turn that ended with anything but `completed` or `max-tokens`, else `undefined`.
 * `reported` is the error the turn reported on `agent/error`, used as the cause.
 */
export function turnErrorOf(result: TurnResult, reported: HarnessError | undefined): TurnError | undefined {
  const where = `turn ${result.turn} of session ${result.sessionId}`
  const reason = result.stopReason
  switch (reason.kind) {
    case 'completed':
    case 'max-tokens':
      return undefined
    case 'aborted':
      return new TurnError(
        AgentLoopErrorCode.TURN_CANCELLED,
        `${where} was cancelled: ${reason.cause}`,
        result,
      )
    case 'blocked':
      return new TurnError(AgentLoopErrorCode.TURN_BLOCKED, `${where} was blocked by agent/pre-step`, result)
    case 'max-steps':
      return new TurnError(
        AgentLoopErrorCode.STEP_LIMIT,
        `${where} stopped at the step limit of ${reason.limit}`,
        result,
      )
    case 'error': {
      const { failure } = reason
      return new TurnError(
        AgentLoopErrorCode.TURN_FAILED,
        `${where} failed: ${failure.code}: ${failure.message}`,
        result,
        {
          cause: reported ?? new LlmError(failure),
        },
      )
    }
    default:
      // Open union (`interrupted`, or a kind a plugin added): not a completion this API can vouch for.
      return new TurnError(
        AgentLoopErrorCode.TURN_FAILED,
        `${where} ended ${JSON.stringify((reason as { readonly kind: string }).kind)}`,
        result,
        reported === undefined ? undefined : { cause: reported },
      )
  }
}
