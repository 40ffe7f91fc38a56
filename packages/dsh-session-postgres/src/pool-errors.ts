/**
 * A pool that survives the server ending its idle connections. pg hands the error of an idle pooled
 * client (a restart, a failover, an administrator terminating backends) to the pool's `error` event,
 * and an EventEmitter with no `error` listener throws it — out of a socket handler, so the process
 * dies. The pool has already dropped that client; the next query opens a new one, or fails and
 * reports the outage through the call that made it.
 */
import type pg from 'pg'

function letPass(): void {}

/** Gives `pool` an `error` listener that lets the event pass, unless it has one of its own. */
export function surviveIdleErrors(pool: pg.Pool): void {
  if (pool.listenerCount('error') === 0) pool.on('error', letPass)
}
