/**
 * A failed model call's retry inside its step: the `agent/request-error` decision (the retry policy
 * innermost) and the `request/retry` event that records it.
 */
import { type EventBus, type LlmFailure, llmFailure, type RetryPolicy } from 'dsh-llm'
import type { Session } from 'dsh-session'
import { awaitListeners, listenerFailed } from '../hooks.ts'
import type { RequestErrorDecision, TurnPosition } from '../types.ts'

/** What a retry decision needs from the agent. */
export interface RetryEnv {
  readonly bus: EventBus
  readonly session: Session
  readonly policy: RetryPolicy
}

/**
 * Asks `agent/request-error` (innermost: `env.policy`) whether the step's failed attempt `attempt`
 * is retried. For a retry, appends `request/retry {turn, step, attempt, delayMs, failure}` and
 * resolves with the delay to wait before the next attempt; resolves `undefined` when the call fails
 * for good. Rejects with `LISTENER_FAILED` for a throwing listener or a result that is not a
 * decision (a retry needs a finite delay >= 0), or with the abort error.
 */
export async function retryDelay(
  env: RetryEnv,
  position: TurnPosition,
  failure: LlmFailure,
  attempt: number,
): Promise<number | undefined> {
  const decision = await requestErrorDecision(env, position, failure, attempt)
  if (decision.kind === 'fail') return undefined
  env.session.append('request/retry', {
    turn: position.turn,
    step: position.step,
    attempt,
    delayMs: decision.delayMs,
    failure: loggableFailure(failure),
  })
  return decision.delayMs
}

async function requestErrorDecision(
  env: RetryEnv,
  position: TurnPosition,
  failure: LlmFailure,
  attempt: number,
): Promise<RequestErrorDecision> {
  const fallback = async (): Promise<RequestErrorDecision> => {
    const delayMs = env.policy.delayFor(failure, attempt)
    return delayMs === undefined ? { kind: 'fail' } : { kind: 'retry', delayMs }
  }
  const decision: unknown = await awaitListeners('agent/request-error', position.agent, position.signal, () =>
    env.bus.waterfall('agent/request-error', { ...position, failure, attempt }, fallback),
  )
  if (decision !== null && typeof decision === 'object') {
    const candidate = decision as { kind?: unknown; delayMs?: unknown }
    if (candidate.kind === 'fail') return { kind: 'fail' }
    // A finite delay only: it is logged (`request/retry`) and slept, so Infinity and NaN are refused.
    if (
      candidate.kind === 'retry' &&
      typeof candidate.delayMs === 'number' &&
      candidate.delayMs >= 0 &&
      candidate.delayMs <= Number.MAX_SAFE_INTEGER
    ) {
      return { kind: 'retry', delayMs: candidate.delayMs }
    }
  }
  throw listenerFailed(
    'agent/request-error',
    position.agent,
    `returned ${JSON.stringify(decision)}, not a decision`,
  )
}

/**
 * `failure` as the log can hold it: `code` and `message`, plus `status`, `retryAfterMs` (finite,
 * >= 0), `requestId` and `providerCode` when they have the right type. A value an adapter got wrong
 * (an `Infinity` retry delay, a numeric request id) is left out rather than written as non-JSON.
 */
export function loggableFailure(failure: LlmFailure): LlmFailure {
  return llmFailure(String(failure.code), String(failure.message), {
    status: finite(failure.status),
    retryAfterMs: finite(failure.retryAfterMs),
    requestId: typeof failure.requestId === 'string' ? failure.requestId : undefined,
    providerCode: typeof failure.providerCode === 'string' ? failure.providerCode : undefined,
  })
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}
