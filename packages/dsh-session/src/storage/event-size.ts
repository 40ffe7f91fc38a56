/**
 * The per-event size limit. Measuring every event exactly would cost a `JSON.stringify` per append, so
 * a cheap walk first bounds the size from above; only an event whose bound passes the limit is
 * serialized and measured exactly.
 */
import { SessionError, SessionErrorCode } from '../errors.ts'
import type { SessionEvent } from '../types.ts'

/** Bytes of the envelope around `data` beyond what the walk counts: keys, seq, time, quotes. */
const ENVELOPE_BYTES = 96
/** The most UTF-8 bytes one UTF-16 unit can become in JSON (a control character as `\u001f`). */
const MAX_BYTES_PER_UNIT = 6

/**
 * The exact serialized size (UTF-8 bytes of `JSON.stringify(event)`) when it is over `limit`, else
 * `undefined`. Costs a walk of the event; serializes only when that walk cannot rule the size out.
 */
export function eventBytesOver(event: SessionEvent, limit: number): number | undefined {
  const budget = limit - ENVELOPE_BYTES - MAX_BYTES_PER_UNIT * event.type.length
  if (bound(event.data, budget) + bound(event.surface, budget) <= budget) return undefined
  const exact = Buffer.byteLength(JSON.stringify(event), 'utf8')
  return exact > limit ? exact : undefined
}

/**
 * The most bytes an `assistant/chunk` payload may be bounded by for its event to be within `limit`
 * without measuring: the limit less the envelope around the payload.
 */
export function chunkSizeBudget(limit: number): number {
  return limit - ENVELOPE_BYTES - MAX_BYTES_PER_UNIT * CHUNK_TYPE_UNITS
}

const CHUNK_TYPE_UNITS = 'assistant/chunk'.length

/** Throws `EVENT_TOO_LARGE` naming the event type, seq, session, size and limit if `event` is over it. */
export function assertEventSize(event: SessionEvent, limit: number, sessionId: string): void {
  const size = eventBytesOver(event, limit)
  if (size !== undefined) throw eventTooLarge(event, size, limit, sessionId)
}

/** The `EVENT_TOO_LARGE` error for `event` of `size` bytes against `limit`. */
export function eventTooLarge(
  event: SessionEvent,
  size: number,
  limit: number,
  sessionId: string,
): SessionError {
  return new SessionError(
    SessionErrorCode.EVENT_TOO_LARGE,
    `session ${sessionId}: ${event.type} at seq ${event.seq} is ${size} bytes serialized, over the limit of ${limit} bytes; nothing was written`,
    { sessionId, eventType: event.type, seq: event.seq },
  )
}

/** An upper bound of `value`'s JSON length in bytes; stops early (returning more than `budget`) once over. */
function bound(value: unknown, budget: number): number {
  switch (typeof value) {
    case 'string':
      return MAX_BYTES_PER_UNIT * value.length + 2
    case 'number':
      return 24
    case 'boolean':
      return 5
    case 'undefined':
      return 0
    case 'object': {
      if (value === null) return 4
      let total = 2
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length && total <= budget; i++) total += bound(value[i], budget - total) + 1
        return total
      }
      const record = value as Record<string, unknown>
      for (const key in record) {
        total += MAX_BYTES_PER_UNIT * key.length + 4 + bound(record[key], budget - total)
        if (total > budget) return total
      }
      return total
    }
    default:
      return budget + 1
  }
}
