/**
 * Lease statements. A lease row per session records the owner, the expiry (database clock) and the
 * fencing token, which grows by one on every acquisition, so a writer deposed by a takeover holds
 * a token that no append will accept again.
 */
import type { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode } from 'dsh-session'
import type pg from 'pg'

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
  pool: pg.Pool,
  owner: string,
  held: ReadonlyMap<string, string>,
  ttlMs: number,
): Promise<Set<string>> {
  if (held.size === 0) return new Set()
  const ids = [...held.keys()]
  const tokens = ids.map((id) => held.get(id) ?? '0')
  const renewed = await pool.query<{ session_id: string }>(RENEW_SQL, [ids, tokens, ttlMs, owner])
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
