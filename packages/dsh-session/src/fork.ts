/**
 * Fork: a child session seeded with a prefix of its parent's log. The boundary must sit between
 * turns, so the child never starts inside someone else's execution.
 */
import { EnclosureTracker } from './enclosure.ts'
import { SessionError } from './errors.ts'
import type { Session, SessionEvent } from './types.ts'

/**
 * The events a fork of `source` at `boundarySeq` is seeded with: `source.events[0, boundarySeq)`,
 * unchanged (same seqs; committed events are frozen, so they are shared, not copied). Throws
 * `SessionError` `INVALID_FORK` when the boundary is not an integer in `[0, source.seq]` or lies
 * inside a turn that is open at that point of the log.
 */
export function forkSeed(source: Session, boundarySeq: number): readonly SessionEvent[] {
  const events = source.events
  if (!Number.isSafeInteger(boundarySeq) || boundarySeq < 0 || boundarySeq > events.length) {
    throw new SessionError(
      'INVALID_FORK',
      `cannot fork session ${source.id} at seq ${String(boundarySeq)}: the boundary must be an integer from 0 to ${events.length}`,
      { sessionId: source.id },
    )
  }
  const tracker = new EnclosureTracker()
  let openedAt = 0
  for (let i = 0; i < boundarySeq; i++) {
    const event = events[i]
    if (event === undefined) break
    tracker.apply(event.type, event.data)
    if (event.type === 'turn/start') openedAt = event.seq
  }
  const open = tracker.openTurn
  if (open !== undefined) {
    throw new SessionError(
      'INVALID_FORK',
      `cannot fork session ${source.id} at seq ${boundarySeq}: turn ${open.turn} (opened at seq ${openedAt}) is still open there; fork between turns`,
      { sessionId: source.id, seq: boundarySeq },
    )
  }
  return events.slice(0, boundarySeq)
}
