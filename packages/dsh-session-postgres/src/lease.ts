/**
 * Lease statements. A lease row per session records the owner, the expiry (database clock) and the
 * fencing token, which grows by one on every acquisition, so a writer deposed by a takeover holds
 * a token that no append will accept again.
 */
import type { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode } from 'dsh-session'
import type pg from 'pg'
import { timed } from './connection.ts'

/**
 * The takeover raises the lease's token and copies it onto the session row in one statement: an
 * append in flight holds that row's lock, so the takeover waits for it, and an append that waited
 * re-checks `fence_token` on the new row version and inserts nothing.
 */
const TAKE_SQL = `
WITH taken AS (
  UPDATE dsh_leases SET owner = $2, token = token + 1, wants_host = false,
    expires_at = now() + $3 * interval '1 millisecond'
  WHERE session_id = $1 AND (owner IS NULL OR expires_at <= now())
  RETURNING session_id, token
)
UPDATE dsh_sessions AS s SET fence_token = taken.token FROM taken WHERE s.id = taken.session_id
RETURNING s.fence_token::text AS token`

const HOLDER_SQL = `
SELECT l.owner, l.expires_at::text AS expires_at
FROM dsh_sessions s LEFT JOIN dsh_leases l ON l.session_id = s.id WHERE s.id = $1`

const RENEW_SQL = `
UPDATE dsh_leases AS l SET expires_at = now() + $3 * interval '1 millisecond'
FROM unnest($1::text[], $2::bigint[]) AS h(id, token)
WHERE l.session_id = h.id AND l.token = h.token AND l.owner = $4
RETURNING l.session_id`

const RELEASE_SQL = `
UPDATE dsh_leases SET owner = NULL, expires_at = NULL, wants_host = $3
WHERE session_id = $1 AND token = $2`

/**
 * Takes the lease of `sessionId` for `owner` if it is free or expired, raising the fencing token.
 * Returns the new token. Throws `NOT_FOUND` for an unknown session and `LOCKED` (naming the holder
 * and how long its lease still runs) when another owner holds an unexpired lease.
 */
export async function takeLease(
  pool: pg.Pool,
  sessionId: SessionId,
  owner: string,
  ttlMs: number,
): Promise<string> {
  const taken = await pool.query<{ token: string }>(TAKE_SQL, [sessionId, owner, ttlMs])
  const token = taken.rows[0]?.token
  if (token !== undefined) return token
  const holder = await pool.query<{ owner: string | null; expires_at: string | null }>(HOLDER_SQL, [
    sessionId,
  ])
  const row = holder.rows[0]
  if (row === undefined) {
    throw new SessionError(SessionErrorCode.NOT_FOUND, `no stored session ${sessionId}`, { sessionId })
  }
  throw new SessionError(
    SessionErrorCode.LOCKED,
    `session ${sessionId} is held by another writer (${row.owner ?? 'unknown'}) until ${row.expires_at ?? 'unknown'}`,
    { sessionId },
  )
}

/**
 * Extends the leases `owner` still holds with the given tokens by `ttlMs`. Returns the ids renewed;
 * a held id missing from the result was taken over (its token is stale).
 */
export async function renewLeases(
  pool: pg.Pool | pg.PoolClient,
  owner: string,
  held: ReadonlyMap<string, string>,
  ttlMs: number,
  queryMs?: number,
): Promise<Set<string>> {
  if (held.size === 0) return new Set()
  const ids = [...held.keys()]
  const tokens = ids.map((id) => held.get(id) ?? '0')
  const renewed = await pool.query<{ session_id: string }>(
    timed(RENEW_SQL, [ids, tokens, ttlMs, owner], queryMs),
  )
  return new Set(renewed.rows.map((row) => row.session_id))
}

/**
 * Frees the lease of `sessionId` if `token` is still its token (a deposed writer frees nothing);
 * `wantsHost` marks it as having queued work, so a fleet host claims it again.
 */
export async function releaseLease(
  pool: pg.Pool,
  sessionId: SessionId,
  token: string,
  wantsHost = false,
): Promise<void> {
  await pool.query(RELEASE_SQL, [sessionId, token, wantsHost])
}

/**
 * Raises the fencing token of a lease `owner` holds with `token` (renewing it), on the lease and the
 * session row in one statement. Settles an append whose reply was lost: the statement, if it is still
 * on its way, waits for this one or finds the token stale, so it can no longer land afterwards.
 * Returns the new token, or `undefined` if the lease is no longer held with `token`.
 */
const REFENCE_SQL = `
WITH raised AS (
  UPDATE dsh_leases SET token = token + 1, expires_at = now() + $4 * interval '1 millisecond'
  WHERE session_id = $1 AND owner = $2 AND token = $3
  RETURNING session_id, token
)
UPDATE dsh_sessions AS s SET fence_token = raised.token FROM raised WHERE s.id = raised.session_id
RETURNING s.fence_token::text AS token`

/** See `REFENCE_SQL`: raises the token of a lease still held by `owner` with `token`. */
export async function refence(
  db: pg.Pool | pg.PoolClient,
  sessionId: SessionId,
  owner: string,
  token: string,
  ttlMs: number,
  queryMs: number,
): Promise<string | undefined> {
  const raised = await db.query<{ token: string }>(
    timed(REFENCE_SQL, [sessionId, owner, token, ttlMs], queryMs),
  )
  return raised.rows[0]?.token
}
