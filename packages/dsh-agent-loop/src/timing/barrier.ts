/**
 * The loop's durability barrier, awaited before each model request and each tool body: everything
 * logged so far must be durable first (DESIGN: nothing reaches the model, and no tool acts, on an
 * event a crash could lose).
 */
import type { Session } from 'dsh-session'
import { throwIfAborted, untilAborted } from './cancel.ts'

/**
 * Waits until every event of `session` is durable, or rejects with the abort error once `signal`
 * aborts. Returns `undefined` (no promise, nothing to await) when nothing is pending — over a backend
 * that stores each event as it commits that is every barrier, and an await per barrier measurably
 * slows the step — after the abort check the await would have made.
 */
export function durableBarrier(session: Session, signal: AbortSignal): Promise<void> | undefined {
  if (session.isDurable()) {
    throwIfAborted(signal)
    return undefined
  }
  return untilAborted(session.flush(), signal)
}
