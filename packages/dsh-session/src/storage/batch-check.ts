/**
 * What every backend checks of a batch before storing it: the seqs run on from the expected one,
 * and each event is one the event catalog accepts — so nothing is stored that a load would refuse.
 */
import { SessionError, SessionErrorCode } from '../errors.ts'
import { checkEvent } from '../schemas.ts'
import type { SessionEvent } from '../types.ts'

/**
 * Throws `SEQ_MISMATCH` when event `i` of `events` does not carry seq `expectedSeq + i`, and the
 * catalog's own refusal — `UNKNOWN_EVENT_TYPE` for a type nobody defined, `INVALID_EVENT` (type,
 * seq and path) for an envelope or payload its schema refuses — with `sessionId` added to `where`.
 * A load refuses the same stored event with `UNKNOWN_EVENT_TYPE`, or `CORRUPT_LOG` whose `cause`
 * is that same `INVALID_EVENT`.
 */
export function checkBatch(sessionId: string, events: readonly SessionEvent[], expectedSeq: number): void {
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as SessionEvent
    const seq = typeof event === 'object' && event !== null ? event.seq : undefined
    if (seq !== expectedSeq + i) {
      const type = typeof event === 'object' && event !== null ? event.type : undefined
      throw new SessionError(
        SessionErrorCode.SEQ_MISMATCH,
        `session ${sessionId}: batch event ${i} (${String(type)}) has seq ${String(seq)}, expected ${expectedSeq + i}`,
        type === undefined
          ? { sessionId, seq: expectedSeq + i }
          : { sessionId, seq: expectedSeq + i, eventType: type },
      )
    }
    try {
      checkEvent(event)
    } catch (error) {
      if (!(error instanceof SessionError)) throw error
      throw new SessionError(
        error.code as SessionErrorCode,
        `session ${sessionId}: ${error.message}; not stored`,
        { ...error.where, sessionId },
        { cause: error },
      )
    }
  }
}

/**
 * How many leading `lines` (each an event's `JSON.stringify`) equal the `stored` events that follow
 * the same seq, in order: the part of a batch that is already stored. Stops at the first difference
 * or at the end of either. Used to settle a retried batch whose earlier attempt may have landed.
 */
export async function storedPrefix(
  stored: AsyncIterable<SessionEvent>,
  lines: readonly string[],
): Promise<number> {
  let matched = 0
  if (lines.length === 0) return 0
  for await (const event of stored) {
    if (JSON.stringify(event) !== lines[matched]) break
    matched++
    if (matched === lines.length) break
  }
  return matched
}

/**
 * The load-side check of one stored event at `seq`: the catalog's verdict, as a load reports it —
 * `UNKNOWN_EVENT_TYPE`, or `CORRUPT_LOG` whose `cause` is the `INVALID_EVENT` — naming the session.
 */
export function checkStoredEvent(sessionId: string, event: SessionEvent, seq: number): void {
  try {
    checkEvent(event)
  } catch (error) {
    if (!(error instanceof SessionError)) throw error
    const code =
      error.code === SessionErrorCode.UNKNOWN_EVENT_TYPE ? error.code : SessionErrorCode.CORRUPT_LOG
    throw new SessionError(
      code,
      `session ${sessionId} seq ${seq}: stored event refused: ${error.message}`,
      { ...error.where, sessionId, seq },
      { cause: error },
    )
  }
}
