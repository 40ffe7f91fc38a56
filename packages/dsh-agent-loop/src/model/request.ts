/**
 * The model request of a step, built from the log: the latest `request/header` and the derived
 * history. `buildLoopRequest` is the loop's only way to a model request.
 */
import { type LlmRequest, markLoopRequest } from 'dsh-llm'
import { composeRequest, type Session } from 'dsh-session'

/**
 * Builds the request from the log as it stands: `composeRequest(latest header, deriveHistory())`,
 * marked with the session, the log length it saw and the step it is for (the loop streams it with
 * `streamInLoopStep`, so the mark reaches the adapter boundary whatever listeners do with the object).
 * Call it right after the durability barrier. Throws `TypeError` when the log has no header yet (the
 * loop always records one first).
 */
export function buildLoopRequest(
  session: Session,
  position: { readonly turn: number; readonly step: number; readonly signal: AbortSignal },
): LlmRequest {
  const { signal } = position
  const state = session.requestHeader()
  if (state === undefined)
    throw new TypeError(`session ${session.id} has no request/header to build a request from`)
  const request = composeRequest(state.header, session.deriveHistory(), { sessionId: session.id, signal })
  markLoopRequest(request, {
    sessionId: session.id,
    logLength: session.seq,
    turn: position.turn,
    step: position.step,
  })
  return request
}
