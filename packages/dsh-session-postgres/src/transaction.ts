/** One transaction on a pooled client. */
import { bothFailures } from 'dsh-session'
import type pg from 'pg'
import { isConnectionFailure, timed } from './connection.ts'

/**
 * Runs `body` between `BEGIN` and `COMMIT` on `client`; rolls back when it throws and rethrows the
 * error. If the rollback fails too, the error thrown keeps both: `body`'s error with the rollback's
 * failure beside it (`cause`: an `AggregateError` of the two), and the connection counts as failed.
 */
export async function inTransaction(
  client: pg.PoolClient,
  queryMs: number,
  body: (client: pg.PoolClient) => Promise<void>,
): Promise<void> {
  await client.query(timed('BEGIN', [], queryMs))
  try {
    await body(client)
    await client.query(timed('COMMIT', [], queryMs))
  } catch (error) {
    if (isConnectionFailure(error)) throw error
    let rollbackFailure: unknown
    await client.query(timed('ROLLBACK', [], queryMs)).catch((failure: unknown) => {
      rollbackFailure = failure
    })
    if (rollbackFailure === undefined) throw error
    throw Object.assign(new Error(`the transaction failed and its ROLLBACK failed too`), {
      cause: bothFailures(error, rollbackFailure, 'ROLLBACK after a failed transaction'),
    })
  }
}
