/** Which sessions a host may claim: work waiting and no live holder. */
import type { SessionId } from 'dsh-llm'
import type pg from 'pg'

/**
 * Sessions with no live holder (lease free, or expired — its host died or stalled) that have work:
 * an expired holder (it may have died mid-turn), a release flagged `wants_host` (queued inbox), or a
 * pending mailbox message. Random order spreads concurrent hosts over different sessions.
 */
const CLAIMABLE_SQL = `
SELECT l.session_id FROM dsh_leases l
WHERE (l.owner IS NULL OR l.expires_at <= now())
  AND (l.owner IS NOT NULL OR l.wants_host OR EXISTS (
        SELECT 1 FROM dsh_mailbox m
        WHERE m.session_id = l.session_id AND m.delivered_seq IS NULL AND m.refused IS NULL))
  AND NOT (l.session_id = ANY($2::text[]))
ORDER BY random() LIMIT $1`

/**
 * Up to `limit` ids of sessions a host may claim now (`PostgresStorage.acquire` then takes the lease
 * and may still lose the race to another host: `LOCKED`): no live holder (the lease is free, or
 * expired — its holder died or stalled) and work waiting — an expired holder (it may have died
 * mid-turn), a release flagged `wants_host` (`markWantsHost`: queued inbox work), or pending mailbox
 * messages. Skips the ids in `except` (the sessions the caller already holds); `limit <= 0` returns
 * `[]` without a query. The order is random, which spreads concurrent hosts over different sessions.
 */
export async function claimableSessions(
  pool: pg.Pool,
  limit: number,
  except: readonly string[],
): Promise<SessionId[]> {
  if (limit <= 0) return []
  const found = await pool.query<{ session_id: string }>(CLAIMABLE_SQL, [limit, except])
  return found.rows.map((row) => row.session_id as SessionId)
}
