/** The log grammar mounted online: a pre-commit guard on every session. */
import type { Context } from 'cordis'
import type { AppendGuard, Session } from 'dsh-session'
import type { CheckSink } from '../check-sink.ts'
import { LogGrammar } from '../grammar/log-grammar.ts'

/**
 * Mounts the grammar as a pre-commit guard on every session of `ctx.sessions`: a candidate event that
 * breaks a rule is refused (the session's `append` throws the `InvariantError`; nothing is appended).
 * Each session's grammar is brought up to date from its committed events before each check, so events
 * committed before mounting, or refused by another guard after this one passed, are accounted for.
 * Chunk entries are checked through the guard's `chunk` hook, without an event envelope.
 */
export function installLogGrammar(ctx: Context, sink: CheckSink): void {
  const grammars = new WeakMap<Session, LogGrammar>()
  const grammarOf = (session: Session): LogGrammar => {
    let grammar = grammars.get(session)
    if (grammar === undefined) {
      grammar = new LogGrammar({ parent: session.parent ?? null })
      grammars.set(session, grammar)
    }
    grammar.catchUp(session)
    return grammar
  }
  const guard: AppendGuard = (session, candidate) => {
    sink.count('eventsChecked')
    const violation = grammarOf(session).check(candidate)[0]
    if (violation !== undefined) throw sink.fail({ ...violation, sessionId: session.id })
  }
  // Chunk entries are checked from their parts; the grammar applies the entry once it is committed.
  guard.chunk = (session, seq, turn, step, chunk) => {
    sink.count('eventsChecked')
    const grammar = grammarOf(session)
    const violation = grammar.chunkViolation(seq, turn, step)
    if (violation !== undefined) throw sink.fail({ ...violation, sessionId: session.id })
    grammar.notePendingChunk(seq, chunk)
  }
  ctx.sessions.guard(guard)
}
