/**
 * The fenced append: one statement that checks the writer's fencing token (locking the lease row
 * against a concurrent takeover), checks and advances the session's next seq, and inserts the batch.
 */
import type { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode, type SessionEvent } from 'dsh-session'
import type pg from 'pg'
import { timed } from './connection.ts'
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

/** The stored bodies of a seq range, as the JSON text written: to compare with a retried batch. */
const TAIL_SQL = `
SELECT body::text AS body FROM dsh_events WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`

/**
 * Appends `events` (seqs `expectedSeq`...) to `sessionId` if `token` is still the session's fencing
 * token and `expectedSeq` its next seq — all in one statement on `db`. A batch (or a leading part of
 * it) that is already stored from `expectedSeq` on — an earlier attempt whose reply was lost — is
 * not written again: only the rest is. Returns how many of the events were found stored. Throws
 * `SessionError` `LEASE_LOST` for a stale token, `SEQ_MISMATCH` for other events at those seqs or a
 * batch that is not contiguous, `NOT_FOUND` for an unknown session. Nothing is written when it
 * throws a `SessionError`. `encoded` carries each event's JSON (from the caller's size check).
 * `queryMs` bounds each reply's wait.
 */
export async function appendFenced(
  db: pg.Pool | pg.PoolClient,
  sessionId: SessionId,
  token: string,
  events: readonly SessionEvent[],
  expectedSeq: number,
  given?: readonly string[],
  queryMs?: number,
): Promise<number> {
  const types: string[] = new Array(events.length)
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
  }
  const encoded = given ?? events.map((event) => JSON.stringify(event))
  const result = await db.query(
    timed(APPEND_SQL, [sessionId, token, expectedSeq, types, encoded], queryMs, APPEND_STATEMENT),
  )
  if (result.rowCount === events.length && events.length > 0) return 0
  const found = await diagnose(db, sessionId, token, expectedSeq, encoded, queryMs)
  if (found === events.length) return found
  const rest = await appendFenced(
    db,
    sessionId,
    token,
    events.slice(found),
    expectedSeq + found,
    encoded.slice(found),
    queryMs,
  )
  return found + rest
}

/**
 * Explains an append that inserted nothing (or checks an empty batch) by reading the current state.
 * Returns how many leading events of the batch are stored from `expectedSeq` on when that settles it
 * (all of them, or all the stored tail holds under this token); throws otherwise.
 */
async function diagnose(
  db: pg.Pool | pg.PoolClient,
  sessionId: SessionId,
  token: string,
  expectedSeq: number,
  encoded: readonly string[],
  queryMs?: number,
): Promise<number> {
  const found = await db.query<{ next_seq: string; token: string | null; owner: string | null }>(
    timed(DIAGNOSE_SQL, [sessionId], queryMs),
  )
  const row = found.rows[0]
  if (row === undefined) {
    throw new SessionError(SessionErrorCode.NOT_FOUND, `no stored session ${sessionId}`, { sessionId })
  }
  const nextSeq = Number(row.next_seq)
  const count = encoded.length
  if (count > 0 && nextSeq > expectedSeq) {
    const end = Math.min(nextSeq, expectedSeq + count)
    const tail = await db.query<{ body: string }>(timed(TAIL_SQL, [sessionId, expectedSeq, end], queryMs))
    let same = 0
    while (same < tail.rows.length && tail.rows[same]?.body === encoded[same]) same++
    // Stored whole (even if the lease has moved on since), or its stored part is the whole tail.
    if (same === count) return same
    if (same === nextSeq - expectedSeq && row.token === token) return same
  }
  if (row.token !== token) {
    throw leaseLost(
      sessionId,
      `append at seq ${expectedSeq} refused: this writer's fencing token ${token} is stale (the lease now has token ${row.token ?? 'none'}, owner ${row.owner ?? 'none'})`,
      expectedSeq,
    )
  }
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
  return 0
}
