/** One transaction on a pooled client. */
import type pg from 'pg'

/** Runs `body` between `BEGIN` and `COMMIT` on one client of `pool`; rolls back when it throws. */
export async function inTransaction(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Promise<void>,
): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    try {
      await body(client)
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined)
      throw error
    }
  } finally {
    client.release()
  }
}
