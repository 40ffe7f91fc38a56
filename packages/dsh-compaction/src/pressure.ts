/** Token accounting: how full the next request's context window is. */
import type { Message } from 'dsh-llm'
import type { Session } from 'dsh-session'
import { ledgerOf } from './ledger.ts'
import type { TokenEstimator } from './tokens.ts'
import type { ContextPressure } from './types.ts'

/**
 * The pressure of `session`'s next request on a `window`-token context: the last provider-reported
 * usage (input + cache read + cache write) while neither the request header nor the surface was
 * replaced since, plus an estimate of the surface nodes added after that request and of `pending`
 * (messages about to enter); with no such usage, an estimate of the header and the whole surface.
 */
export function contextPressure(
  session: Session,
  window: number,
  estimator: TokenEstimator,
  pending: readonly Message[] = [],
): ContextPressure {
  const ledger = ledgerOf(session)
  const history = session.deriveMessages()
  const anchor = ledger.anchor
  let tokens: number
  let anchored = false
  if (anchor !== undefined && anchor.nodeIndex <= history.length) {
    tokens = anchor.tokens + estimator.messages(history, anchor.nodeIndex)
    anchored = true
  } else {
    tokens = estimator.header(session.requestHeader()?.header) + estimator.messages(history)
  }
  tokens += estimator.messages(pending)
  return { tokens, window, ratio: window > 0 ? tokens / window : 0, anchored }
}
