/** The outermost `llm/stream` listener: checks the stream the caller receives against the stream grammar. */
import type { Context } from 'cordis'
import { checkChunks, type LlmRequest, type LoopRequestMark } from 'dsh-llm'
import type { CheckSink } from '../check-sink.ts'
import { grammarCheck } from '../grammar/checked-stream.ts'
import { attribute } from './request-boundary.ts'
import { describeMark } from './request-checker.ts'

/**
 * Registers the listener with `prepend: true`, so it is outermost among the listeners present: it
 * sees the stream exactly as the caller will receive it. A grammar violation throws from the
 * iteration. The grammar is handed on as a check (`checkChunks`), so it runs in the reaction the
 * runtime spends on this listener's stream: no promise of its own per chunk.
 */
export function installStreamGrammar(ctx: Context, sink: CheckSink): void {
  ctx.on(
    'llm/stream',
    (request, next) => {
      const mark = attribute(request)
      const stream = next()
      sink.count('streamsChecked')
      return checkChunks(
        stream,
        grammarCheck((problem) =>
          sink.fail({
            check: 'stream-grammar',
            message: `${streamSubject(request, mark)}: ${problem}`,
            ...(mark === undefined ? {} : { sessionId: mark.sessionId }),
          }),
        ),
      )
    },
    { prepend: true },
  )
}

/** How a violation names the checked stream; built only when one is reported. */
function streamSubject(request: LlmRequest, mark: LoopRequestMark | undefined): string {
  return mark === undefined
    ? `the stream of an unmarked ${request.provider}/${request.model} request`
    : `the stream of ${describeMark(mark)}`
}
