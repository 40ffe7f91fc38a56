/**
 * The outermost `llm/stream` listener: re-derives each loop-built request before it leaves, and
 * wraps the stream the caller receives in the stream grammar.
 */
import type { Context } from 'cordis'
import { loopRequestMark } from 'dsh-llm'
import type { CheckSink } from './registry.ts'
import { RequestChecker } from './request-checker.ts'
import { checkedStream } from './stream-grammar.ts'

/**
 * Registers the listener with `prepend: true`, so it is outermost among the listeners present: it
 * sees the request exactly as the caller built it, and the stream exactly as the caller will receive
 * it. One `RequestChecker` per mount folds each session's log incrementally (its own fold, never the
 * session's caches). Unmarked requests are not re-derived (only their stream is checked). A
 * reconstruction mismatch throws synchronously from `ctx.llm.stream`; a grammar violation throws from
 * the iteration.
 */
export function installStreamChecks(
  ctx: Context,
  sink: CheckSink,
  enabled: { readonly reconstruct: boolean; readonly grammar: boolean },
): void {
  const checker = new RequestChecker(ctx.sessions)
  ctx.on(
    'llm/stream',
    (request, next) => {
      const mark = loopRequestMark(request)
      if (enabled.reconstruct && mark !== undefined) {
        sink.count('requestsChecked')
        const violation = checker.verify(request, mark)
        if (violation !== undefined) throw sink.fail(violation)
      }
      const stream = next()
      if (!enabled.grammar) return stream
      sink.count('streamsChecked')
      const subject =
        mark === undefined
          ? `the stream of an unmarked ${request.provider}/${request.model} request`
          : `the stream of the request marked for session ${mark.sessionId} at log length ${mark.logLength}`
      return checkedStream(stream, (problem) =>
        sink.fail({
          check: 'stream-grammar',
          message: `${subject}: ${problem}`,
          ...(mark === undefined ? {} : { sessionId: mark.sessionId }),
        }),
      )
    },
    { prepend: true },
  )
}
