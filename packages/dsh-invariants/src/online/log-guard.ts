/** The log grammar mounted online: a pre-commit guard on every session. */
import type { Context } from 'cordis'
import type { Session } from 'dsh-session'
import type { CheckSink } from '../check-sink.ts'
import { LogGrammar } from '../grammar/log-grammar.ts'

/**
 * Mounts the grammar as a pre-commit guard on every session of `ctx.sessions`: a candidate event that
 * breaks a rule is refused (the session's `append` throws the `InvariantError`; nothing is appended).
 * Each session's grammar is brought up to date from its committed events before each check, so events
 * committed before mounting, or refused by another guard after this one passed, are accounted for.
 */
export function installLogGrammar(ctx: Context, sink: CheckSink): void {
  const grammars = new WeakMap<Session, LogGrammar>()
  ctx.sessions.guard((session, candidate) => {
    sink.count('eventsChecked')
    let grammar = grammars.get(session)
    if (grammar === undefined) {
      grammar = new LogGrammar({ parent: session.parent ?? null })
      grammars.set(session, grammar)
    }
    grammar.catchUp(session)
    const [violation] = grammar.check(candidate)
    if (violation !== undefined) throw sink.fail({ ...violation, sessionId: session.id })
  })
}
