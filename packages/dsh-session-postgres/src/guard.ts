/** Stopping a deposed writer: an append guard that refuses every event for a session whose lease was lost. */
import type { SessionId } from 'dsh-llm'
import type { AppendGuard, SessionStore } from 'dsh-session'
import { leaseLost } from './errors.ts'
import type { PostgresStorage } from './storage.ts'

/**
 * Installs on `sessions` (a store over `storage`) a guard that makes `session.append` throw
 * `SessionError` `LEASE_LOST` for every session whose lease `storage` has lost, so a deposed writer
 * stops at its next append instead of running on in memory. Returns a disposer.
 */
export function fenceSessions(sessions: SessionStore, storage: PostgresStorage): () => void {
  const refuse = (sessionId: SessionId, type: string, seq: number): void => {
    if (storage.tokenOf(sessionId) === undefined || storage.holds(sessionId)) return
    throw leaseLost(
      sessionId,
      `cannot append ${type} at seq ${seq}: this host's lease was taken over by another writer`,
      seq,
    )
  }
  const guard: AppendGuard = (session, candidate) => refuse(session.id, candidate.type, candidate.seq)
  guard.chunk = (session, seq) => refuse(session.id, 'assistant/chunk', seq)
  return sessions.guard(guard)
}
