/** Stopping a deposed writer: an append guard that refuses every event for a session whose lease was lost. */
import type { SessionStore } from 'dsh-session'
import { leaseLost } from './errors.ts'
import type { PostgresStorage } from './storage.ts'

/**
 * Installs on `sessions` (a store over `storage`) a guard that makes `session.append` throw
 * `SessionError` `LEASE_LOST` for every session whose lease `storage` has lost, so a deposed writer
 * stops at its next append instead of running on in memory. Returns a disposer.
 */
export function fenceSessions(sessions: SessionStore, storage: PostgresStorage): () => void {
  return sessions.guard((session, candidate) => {
    if (storage.tokenOf(session.id) === undefined || storage.holds(session.id)) return
    throw leaseLost(
      session.id,
      `cannot append ${candidate.type} at seq ${candidate.seq}: this host's lease was taken over by another writer`,
      candidate.seq,
    )
  })
}
