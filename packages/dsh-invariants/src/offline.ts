/**
 * The checks over a recorded log, with no live session or model: everything the online checks can
 * verify from the log alone, collected rather than thrown.
 */
import { foldMessages, type SessionEvent } from 'dsh-session'
import { LogGrammar, type LogOrigin } from './log-grammar.ts'
import { splitModelCalls } from './model-calls.ts'
import { StreamGrammar } from './stream-grammar.ts'
import type { Violation } from './types.ts'

/**
 * Checks a whole log and returns every violation found, ordered by position (`index`), each with the
 * offending event's `seq`. Runs the log grammar over every event (continuing after a violation, with
 * the state recovered as sensibly as it can be), the stream grammar over the chunks of every model
 * call the log records, and the surface fold (a compaction `replace` that does not fit). A model call
 * cut short (no `finish`) is reported only when the step still logged a complete, non-interrupted
 * `assistant/message` from it. `origin.parent` pins where `session/end-seed` may stand (see
 * `LogOrigin`). Never throws for a bad log; an empty array means clean.
 */
export function checkSessionLog(
  events: readonly SessionEvent[],
  origin: LogOrigin = {},
): readonly Violation[] {
  const found: Violation[] = []
  const grammar = new LogGrammar(origin)
  events.forEach((event, index) => {
    for (const violation of grammar.check(event)) found.push({ ...violation, index })
    grammar.apply(event)
  })
  checkStreams(events, found)
  checkSurface(events, found)
  return Object.freeze(
    found
      .map((violation, order) => ({ violation, order }))
      .sort(
        (a, b) =>
          (a.violation.index ?? Number.MAX_SAFE_INTEGER) - (b.violation.index ?? Number.MAX_SAFE_INTEGER) ||
          a.order - b.order,
      )
      .map(({ violation }) => Object.freeze(violation)),
  )
}

function checkStreams(events: readonly SessionEvent[], found: Violation[]): void {
  for (const call of splitModelCalls(events)) {
    const grammar = new StreamGrammar()
    const subject = `assistant/chunk of the model call starting at seq ${events[call.start]?.seq} (turn ${call.turn} step ${call.step})`
    for (const index of call.chunks) {
      const event = events[index]
      if (event?.type !== 'assistant/chunk') continue
      const problem = grammar.push(event.data.chunk)
      if (problem !== undefined) {
        found.push({ check: 'stream-grammar', seq: event.seq, index, message: `${subject}: ${problem}` })
      }
    }
    if (grammar.finished || call.endedBy === undefined) continue
    const ender = events[call.endedBy]
    if (ender?.type === 'assistant/message' && ender.data.interrupted !== true) {
      found.push({
        check: 'stream-grammar',
        seq: ender.seq,
        index: call.endedBy,
        message: `assistant/message completes the model call starting at seq ${events[call.start]?.seq}, but ${grammar.end() ?? 'the stream has no finish chunk'}`,
      })
    }
  }
}

function checkSurface(events: readonly SessionEvent[], found: Violation[]): void {
  try {
    foldMessages(events)
  } catch (error) {
    const seq = (error as { where?: { seq?: unknown } }).where?.seq
    const message = error instanceof Error ? error.message : String(error)
    if (typeof seq === 'number') {
      const index = events.findIndex((event) => event.seq === seq)
      found.push({ check: 'log-grammar', seq, message, ...(index < 0 ? {} : { index }) })
    } else {
      found.push({ check: 'log-grammar', message })
    }
  }
}
