/** Serializing a batch for the fenced append, with the per-event size limit. */
import type { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode, type SessionEvent } from 'dsh-session'

/** Each event's JSON; throws `EVENT_TOO_LARGE` for one over `maxEventBytes` UTF-8 bytes. */
export function encodeEvents(
  sessionId: SessionId,
  events: readonly SessionEvent[],
  maxEventBytes: number,
): string[] {
  const encoded: string[] = new Array(events.length)
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as SessionEvent
    const json = JSON.stringify(event)
    encoded[i] = json
    // UTF-8 is at most 3 bytes per UTF-16 unit: count bytes only when the limit could be reached.
    if (json.length * 3 <= maxEventBytes) continue
    const bytes = Buffer.byteLength(json, 'utf8')
    if (bytes <= maxEventBytes) continue
    throw new SessionError(
      SessionErrorCode.EVENT_TOO_LARGE,
      `session ${sessionId}: event ${event.type} at seq ${event.seq} is ${bytes} bytes, over the limit of ${maxEventBytes}`,
      { sessionId, eventType: event.type, seq: event.seq },
    )
  }
  return encoded
}
