/**
 * The session prefix: request-only opening messages composed once per loop instance by the
 * `agent/session-prefix` waterfall, recorded in the request header, never in `deriveMessages()`.
 */
import { type EventBus, frozenCopy, type Message } from 'dsh-llm'
import { awaitListeners, listenerFailed } from '../hooks.ts'
import type { Agent } from '../types.ts'

const EMPTY: readonly Message[] = Object.freeze([])

function isMessage(value: unknown): value is Message {
  if (value === null || typeof value !== 'object') return false
  const candidate = value as { id?: unknown; role?: unknown; content?: unknown }
  return (
    typeof candidate.id === 'string' &&
    (candidate.role === 'user' || candidate.role === 'assistant') &&
    Array.isArray(candidate.content)
  )
}

/**
 * Runs the `agent/session-prefix` waterfall and returns its result deep-copied and frozen (empty
 * when nobody contributes). Rejects with the abort error if `signal` aborts during composition —
 * the caller must then discard, never cache — and with `LISTENER_FAILED` when a listener throws or
 * returns something other than an array of messages.
 */
export async function composeSessionPrefix(
  bus: EventBus,
  agent: Agent,
  signal: AbortSignal,
): Promise<readonly Message[]> {
  const result: unknown = await awaitListeners('agent/session-prefix', agent, signal, () =>
    bus.waterfall('agent/session-prefix', { agent, signal }, async () => EMPTY),
  )
  if (!Array.isArray(result) || !result.every(isMessage)) {
    throw listenerFailed(
      'agent/session-prefix',
      agent,
      `returned ${JSON.stringify(result)}, not an array of messages`,
    )
  }
  return result.length === 0 ? EMPTY : frozenCopy(result as readonly Message[])
}

/** Where a loop instance keeps its session prefix once composed (its model call environment, which reads `prefix` for the header). */
export interface PrefixHolder {
  readonly bus: EventBus
  /** The composed prefix; empty until composed. */
  prefix: readonly Message[]
  /** True once `prefix` holds this instance's composition. */
  prefixComposed: boolean
}

/**
 * The instance's session prefix: the cached one, or a promise of it while it is composed on first
 * use (rejecting like `composeSessionPrefix`). A composition that `signal` interrupted is
 * discarded, never cached: the abort error is thrown instead.
 */
export function sessionPrefix(
  holder: PrefixHolder,
  agent: Agent,
  signal: AbortSignal,
): readonly Message[] | Promise<readonly Message[]> {
  return holder.prefixComposed ? holder.prefix : composeOnce(holder, agent, signal)
}

async function composeOnce(
  holder: PrefixHolder,
  agent: Agent,
  signal: AbortSignal,
): Promise<readonly Message[]> {
  const composed = await composeSessionPrefix(holder.bus, agent, signal)
  if (signal.aborted) throw signal.reason
  holder.prefix = composed
  holder.prefixComposed = true
  return composed
}
