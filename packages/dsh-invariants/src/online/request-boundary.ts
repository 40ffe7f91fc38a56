/**
 * The request-reconstruction check at the last boundary: every request the `llm/stream` chain hands
 * to an adapter is attributed to the loop step it runs in and compared with that step's re-derivation
 * from the log, whichever listener, middleware or retry produced the object that arrives.
 */
import type { Context } from 'cordis'
import {
  currentLoopStep,
  type LlmRequest,
  type LoopRequestMark,
  loopRequestMark,
  trackLoopSteps,
  untraced,
} from 'dsh-llm'
import type { CheckSink } from '../check-sink.ts'
import { RequestChecker } from './request-checker.ts'

// The `invariants/request-outside-step` event is declared in registry.ts: a module augmentation
// here would not reach the built .d.ts (this file is not part of the public type graph).

/**
 * The mark a request at the boundary answers to: the loop step running in this async context, else
 * the request's own mark (a request marked and streamed by hand, as test drivers do), else none.
 */
export function attribute(request: LlmRequest): LoopRequestMark | undefined {
  return currentLoopStep()?.mark ?? loopRequestMark(request)
}

/**
 * Guards `ctx.llm` at the adapter boundary. A request attributed to a loop step is re-derived (one
 * `RequestChecker` per mount, folding each session's log incrementally) and a mismatch throws the
 * `InvariantError` from the `next()` call that reached the adapter — the adapter is not called. A
 * request with no step is counted and announced, then let through.
 */
export function installRequestBoundary(ctx: Context, sink: CheckSink): void {
  trackLoopSteps()
  // The service itself, not cordis's tracing proxy: a proxied `get` builds a shadow context per call.
  const checker = new RequestChecker(untraced(ctx.sessions))
  ctx.llm.guard((request) => {
    const mark = attribute(request)
    if (mark === undefined) {
      sink.count('requestsOutsideSteps')
      ctx.emit('invariants/request-outside-step', request)
      return
    }
    sink.count('requestsChecked')
    const violation = checker.verify(request, mark)
    if (violation !== undefined) throw sink.fail(violation)
  })
}
