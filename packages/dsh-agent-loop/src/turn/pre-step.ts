/**
 * The `agent/pre-step` decision of one proposed step: enter the claimed batch (possibly changed by
 * listeners) or reject the step. Entered messages are checked at the door like `send`'s.
 */
import type { EventBus, Message, UserMessage } from 'dsh-llm'
import { describeError } from '../errors.ts'
import { awaitListeners, listenerFailed } from '../hooks.ts'
import { checkUserMessage } from '../inbox/message-check.ts'
import { throwIfAborted } from '../timing/cancel.ts'
import type { PreStepDecision, TurnPosition } from '../types.ts'

/**
 * The step's pre-step decision over the claimed `messages`: synchronous when nobody listens to
 * `agent/pre-step` (then `enter` with `messages`). Throws or rejects with `LISTENER_FAILED` for a
 * throwing listener, a result that is not a decision or an entered message the log would refuse,
 * and with the abort error.
 */
export function preStep(
  bus: EventBus,
  position: TurnPosition,
  messages: readonly UserMessage[],
  sessionPrefix: readonly Message[],
): PreStepDecision | Promise<PreStepDecision> {
  if (!bus.has('agent/pre-step')) {
    // Nobody listens: the default decision, with the abort check the await would have made.
    throwIfAborted(position.signal)
    return checkedDecision(position, { kind: 'enter', messages })
  }
  const input = { ...position, messages, sessionPrefix }
  return awaitListeners('agent/pre-step', position.agent, position.signal, () =>
    bus.waterfall('agent/pre-step', input, async () => ({ kind: 'enter', messages }) as const),
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
