/**
 * The checks over a recorded log, with no live session or model: everything the online checks can
 * verify from the log alone, collected rather than thrown.
 */
import type { SessionEvent } from 'dsh-session'
import type { LogOrigin } from '../grammar/log-grammar.ts'
import type { Violation } from '../types.ts'
import { SessionLogChecker } from './log-checker.ts'

/**
 * Checks a whole log and returns every violation found, ordered by position (`index`), each with the
 * offending event's `seq`. Runs the log grammar over every event (continuing after a violation, with
 * the state recovered as sensibly as it can be) — including message = chunks and tool adjacency — the
 * stream grammar over the chunks of every model call the log records, the surface fold (a compaction
 * `replace` that does not fit), and the tool adjacency of every request the log implies. A model call
 * cut short (no `finish`) is reported only when the step still logged a complete, non-interrupted
 * `assistant/message` from it. `origin.parent` pins where `session/end-seed` may stand (see
 * `LogOrigin`). Never throws for a bad log; an empty array means clean. One pass, as
 * `SessionLogChecker` (which checks a log too large to hold, event by event).
 */
export function checkSessionLog(
  events: readonly SessionEvent[],
  origin: LogOrigin = {},
): readonly Violation[] {
  const checker = new SessionLogChecker(origin)
  const found: Violation[] = []
  for (const event of events) {
    for (const violation of checker.push(event)) found.push(Object.freeze(violation))
  }
  return Object.freeze(found)
}
