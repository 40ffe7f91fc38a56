/**
 * One pooled connection per piece of work, with bounded waits: acquiring it, and each query on it.
 * A connection that failed or timed out mid-query is destroyed, never handed back to the pool
 * (a hung connection returned to the pool would stall whatever used it next).
 */
import { HarnessError } from 'dsh-llm'
import { SessionError, SessionErrorCode } from 'dsh-session'
import type pg from 'pg'

/** How long the storage waits, in ms. */
export interface Timeouts {
  /** For a connection (a new one, or a pooled one to come free). */
  readonly connectMs: number
  /** For the reply to each query (client side). */
  readonly queryMs: number
}

/**
 * Whether `error` from a query means the connection itself failed (closed, reset, timed out) rather
 * than the server refusing the statement: then whether the statement ran is unknown. A server
 * refusal carries a SQLSTATE; class 08 (connection exception) and 57P01-57P03 (the server shutting
 * down) are connection failures too.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof HarnessError) return false
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03'
}

/**
 * Takes a connection from `pool` within `timeouts.connectMs`, runs `work` on it and gives it back;
 * destroys it instead when `work` failed with a connection failure. Failing to get a connection
 * throws `SessionError` `STORAGE` naming `what` (nothing was sent).
 */
export async function withClient<T>(
  pool: pg.Pool,
  timeouts: Timeouts,
  what: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await connect(pool, timeouts.connectMs, what)
  // A connection lost while checked out is also an `error` event on the client; the query in flight
  // reports it, so the event must not reach the process as an uncaught error.
  client.on('error', letPass)
  let result: T
  try {
    result = await work(client)
  } catch (error) {
    client.off('error', letPass)
    client.release(isConnectionFailure(error) ? toError(error) : undefined)
    throw error
  }
  client.off('error', letPass)
  client.release()
  return result
}

async function connect(pool: pg.Pool, ms: number, what: string): Promise<pg.PoolClient> {
  let timer: NodeJS.Timeout | undefined
  let gaveUp = false
  const pending = pool.connect()
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      gaveUp = true
      reject(new Error(`no connection within ${ms} ms`))
    }, ms)
  })
  try {
    return await Promise.race([pending, timeout])
  } catch (cause) {
    // A connection that arrives after the wait was given up goes straight back.
    if (gaveUp)
      pending.then(
        (late) => late.release(),
        () => undefined,
      )
    throw new SessionError(
      SessionErrorCode.STORAGE,
      `${what}: could not get a database connection: ${String(cause)}`,
      {},
      { cause },
    )
  } finally {
    clearTimeout(timer)
  }
}

function letPass(): void {}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

/**
 * A query with a client-side limit on the wait for its reply: pg reads `query_timeout` from the
 * query's config (its type declarations leave it out). `name` prepares it under that name.
 */
export function timed(
  text: string,
  values: unknown[],
  queryMs: number | undefined,
  name?: string,
): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout?: number } = { text, values }
  if (queryMs !== undefined) config.query_timeout = queryMs
  if (name !== undefined) config.name = name
  return config
}
