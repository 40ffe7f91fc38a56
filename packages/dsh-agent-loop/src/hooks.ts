/** Awaiting an extension point: cut short by cancellation, listener failures named by event. */

import { AgentLoopError, AgentLoopErrorCode, describeError } from './errors.ts'
import { untilAborted } from './timing/cancel.ts'
import type { Agent } from './types.ts'

/**
 * Runs `dispatch` (a `ctx.waterfall` or `ctx.serial` call) and awaits its result, racing the turn's
 * `signal`. Rejects with the abort error when the signal aborts first (a late listener result is
 * ignored), and with `AgentLoopError` `LISTENER_FAILED` naming `event` and the agent when a
 * listener throws.
 */
export async function awaitListeners<T>(
  event: string,
  agent: Agent,
  signal: AbortSignal,
  dispatch: () => Promise<T> | T,
): Promise<T> {
  try {
    return await untilAborted(Promise.resolve().then(dispatch), signal)
  } catch (error) {
    if (signal.aborted) throw error
    throw listenerFailed(event, agent, describeError(error), error)
  }
}

/** The error for a listener of `event` that failed or returned an invalid value. */
export function listenerFailed(
  event: string,
  agent: Agent,
  problem: string,
  cause?: unknown,
): AgentLoopError {
  return new AgentLoopError(
    AgentLoopErrorCode.LISTENER_FAILED,
    `${event} listener failed for agent ${agent.id}: ${problem}`,
    cause === undefined ? undefined : { cause },
  )
}
