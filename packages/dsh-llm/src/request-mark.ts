/**
 * Loop-built requests carry a mark that says which session log (and how much of it) they were
 * derived from, so a checker can re-derive them. The mark lives beside the request, not inside it:
 * the request stays exactly what the model receives.
 */
import type { SessionId } from './ids.ts'
import type { LlmRequest } from './request.ts'

/** Where a loop-built request came from: the session and the number of log events it saw. */
export interface LoopRequestMark {
  readonly sessionId: SessionId
  /** The log length (next seq) when the request was built; the request derives from seqs below it. */
  readonly logLength: number
}

const marks = new WeakMap<LlmRequest, LoopRequestMark>()

/** Records that `request` was built by the agent loop from the given log prefix. */
export function markLoopRequest(request: LlmRequest, mark: LoopRequestMark): void {
  marks.set(request, Object.freeze({ sessionId: mark.sessionId, logLength: mark.logLength }))
}

/** The mark of a loop-built request, or `undefined` for a request built elsewhere. */
export function loopRequestMark(request: LlmRequest): LoopRequestMark | undefined {
  return marks.get(request)
}
