/**
 * The fenced append: one statement that checks the writer's fencing token (locking the lease row
 * against a concurrent takeover), checks and advances the session's next seq, and inserts the batch.
 */
import type { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode, type SessionEvent } from 'dsh-session'
import type pg from 'pg'
import { leaseLost } from './errors.ts'

/**
 * `$1` session id, `$2` fencing token, `$3` expected first seq, `$4` event types, `$5` event bodies.
 * The head `UPDATE` checks the token and the seq on the session row and locks it: two appends at one
 * seq cannot both pass, and a takeover (which writes `fence_token` on the same row) waits for this
 * statement's transaction — or, if it came first, this statement re-checks the token on the new row
 * version and inserts nothing.
 */
export const APPEND_SQL = `
WITH head AS (
  UPDATE dsh_sessions SET next_seq = next_seq + cardinality($4::text[])
  WHERE id = $1 AND fence_token = $2 AND next_seq = $3
  RETURNING id
)
INSERT INTO dsh_events (session_id, seq, type, body)
SELECT head.id, $3 + e.n - 1, e.type, e.body
FROM head, unnest($4::text[], $5::json[]) WITH ORDINALITY AS e(type, body, n)`

/**
 * The name the append is prepared under on each connection: parsed and planned once per connection
 * instead of on every append (which cost a third of its server time).
 */
const APPEND_STATEMENT = 'dsh_append_v1'

/** Why an append inserted nothing: the current token and next seq, read after the fact. */
const DIAGNOSE_SQL = `
SELECT s.next_seq::text AS next_seq, s.fence_token::text AS token, l.owner
FROM dsh_sessions s LEFT JOIN dsh_leases l ON l.session_id = s.id WHERE s.id = $1`

/**
 * Appends `events` (seqs `expectedSeq`...) to `sessionId` if `token` is still the session's fencing
 * token and `expectedSeq` its next seq — all in one statement on `db`. Throws
 * `SessionError` `LEASE_LOST` for a stale token, `SessionError` `SEQ_MISMATCH` for another next seq or a batch that is
 * not contiguous, `NOT_FOUND` for an unknown session. Nothing is written when it throws. `encoded`
 * may carry each event's JSON already serialized (by the caller's size check).
 */
export async function appendFenced(
  db: pg.Pool | pg.PoolClient,
  sessionId: SessionId,
  token: string,
  events: readonly SessionEvent[],
  expectedSeq: number,
  encoded?: readonly string[],
): Promise<void> {
  const types: string[] = new Array(events.length)
  const bodies: string[] = new Array(events.length)
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as SessionEvent
    if (event.seq !== expectedSeq + i) {
      throw new SessionError(
        SessionErrorCode.SEQ_MISMATCH,
        `session ${sessionId}: batch event ${i} (${event.type}) has seq ${event.seq}, expected ${expectedSeq + i}`,
        { sessionId, seq: event.seq, eventType: event.type },
      )
    }
    types[i] = event.type
    bodies[i] = encoded?.[i] ?? JSON.stringify(event)
  }
  const result = await db.query({
    name: APPEND_STATEMENT,
    text: APPEND_SQL,
    values: [sessionId, token, expectedSeq, types, bodies],
  })
  if (result.rowCount === events.length && events.length > 0) return
  await diagnose(db, sessionId, token, expectedSeq, events.length)
}

/** Explains an append that inserted nothing (or checks an empty batch) by reading the current state. */
async function diagnose(
  db: pg.Pool | pg.PoolClient,
  sessionId: SessionId,
  token: string,
  expectedSeq: number,
  count: number,
): Promise<void> {
  const found = await db.query<{ next_seq: string; token: string | null; owner: string | null }>(
    DIAGNOSE_SQL,
    [sessionId],
  )
  const row = found.rows[0]
  if (row === undefined) {
    throw new SessionError(SessionErrorCode.NOT_FOUND, `no stored session ${sessionId}`, { sessionId })
  }
  if (row.token !== token) {
    throw leaseLost(
      sessionId,
      `append at seq ${expectedSeq} refused: this writer's fencing token ${token} is stale (the lease now has token ${row.token ?? 'none'}, owner ${row.owner ?? 'none'})`,
      expectedSeq,
    )
  }
  const nextSeq = Number(row.next_seq)
  if (nextSeq !== expectedSeq) {
    throw new SessionError(
      SessionErrorCode.SEQ_MISMATCH,
      `session ${sessionId}: batch expected at seq ${expectedSeq} but the next seq is ${nextSeq}`,
      { sessionId, seq: expectedSeq },
    )
  }
  if (count > 0) {
    // Token and seq both match now, yet nothing was inserted: a takeover and release raced us.
    throw leaseLost(
      sessionId,
      `append at seq ${expectedSeq} refused: the lease changed while it ran`,
      expectedSeq,
    )
  }
}
