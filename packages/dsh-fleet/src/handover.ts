/** How a session moves between hosts mid-turn: the drain cause, its detection, and the continue note. */
import { createUserMessage, type SessionId, type UserMessage } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'

/** The cause of a turn cut by `FleetHost.drain`; the host that claims the session next continues it. */
export const DRAIN_CAUSE = 'host draining'

/** Whether the log's last turn was cut by a draining host (and nothing ran after it). */
export function wasDrainedMidTurn(events: readonly SessionEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]
    if (event?.type === 'turn/start') return false
    if (event?.type === 'turn/end') {
      const reason = event.data.reason
      return reason.kind === 'aborted' && reason.cause === DRAIN_CAUSE
    }
  }
  return false
}

/** The default note sent to a session whose interrupted turn was closed by repair on claim. */
export function interruptedNote(sessionId: SessionId): UserMessage {
  return createUserMessage({
    content: [
      {
        type: 'text',
        text: `Session ${sessionId} was moved to another host after its previous turn was interrupted. Continue the task where it stopped.`,
      },
    ],
    source: { kind: 'plugin', plugin: 'dsh-fleet' },
  })
}
