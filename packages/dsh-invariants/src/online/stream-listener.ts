/** The outermost `llm/stream` listener: wraps the stream the caller receives in the stream grammar. */
import type { Context } from 'cordis'
import type { CheckSink } from '../check-sink.ts'
import { checkedStream } from '../grammar/checked-stream.ts'
import { attribute } from './request-boundary.ts'
import { describeMark } from './request-checker.ts'

/**
 * Registers the listener with `prepend: true`, so it is outermost among the listeners present: it
 * sees the stream exactly as the caller will receive it. A grammar violation throws from the
 * iteration.
 */
export function installStreamGrammar(ctx: Context, sink: CheckSink): void {
  ctx.on(
    'llm/stream',
    (request, next) => {
      const mark = attribute(request)
      const stream = next()
      sink.count('streamsChecked')
      const subject =
        mark === undefined
          ? `the stream of an unmarked ${request.provider}/${request.model} request`
          : `the stream of ${describeMark(mark)}`
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
