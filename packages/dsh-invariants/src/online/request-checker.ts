/**
 * The online request-reconstruction check: each marked request against the checker's own fold of
 * the session log, kept per session and advanced only over the events logged since the last request.
 */
import type { LlmRequest, LoopRequestMark, Message } from 'dsh-llm'
import { composeRequest, type HeaderState, type Session, type SessionStore } from 'dsh-session'
import { compareRequestTo } from '../derive/compare.ts'
import { RequestFold } from '../derive/request-fold.ts'
import { VerifiedHistory } from '../derive/verified-history.ts'
import type { Violation } from '../types.ts'

/** The expected request minus its history, composed once per header snapshot. */
interface Shell {
  readonly header: HeaderState
  readonly request: LlmRequest
  readonly prefix: readonly Message[]
}

interface Tracked {
  readonly fold: RequestFold
  shell: Shell | undefined
  readonly verified: VerifiedHistory
}

function track(): Tracked {
  return { fold: new RequestFold(), shell: undefined, verified: new VerifiedHistory() }
}

/**
 * Checks loop-marked requests against `sessions`. Per session it keeps a `RequestFold` built from
 * `session.events` alone — never `deriveMessages()` or `requestHeader()` — and advances it to each
 * mark's `logLength`, so a request costs the events logged since the previous one plus one identity
 * test per message. A mark whose `logLength` lies before the fold's position (a request built from an
 * older prefix) is checked against a fresh fold of that prefix, leaving the kept fold alone.
 */
export class RequestChecker {
  private readonly tracked = new WeakMap<Session, Tracked>()
  private folded = 0
  private compared = 0

  constructor(private readonly sessions: Pick<SessionStore, 'get'>) {}

  /**
   * Events folded so far, over every session: each committed event once, plus the prefix again for
   * each surface `replace` and for each request marked at an older log length. Pins the cost in tests.
   */
  get eventsFolded(): number {
    return this.folded
  }

  /**
   * Messages compared so far, over every session: for a request composed from a history view, the
   * messages new since the previous passing request plus a few rechecks (`RECHECKS_PER_REQUEST`);
   * for any other request, all of its messages. Pins the cost in tests.
   */
  get messagesCompared(): number {
    return this.compared
  }

  /**
   * Returns `undefined` when `request` is what the first `mark.logLength` events of the marked session
   * imply, else the violation naming the first differing field (and message index).
   */
  verify(request: LlmRequest, mark: LoopRequestMark): Violation | undefined {
    const base = { check: 'request-reconstruction', sessionId: mark.sessionId } as const
    const session = this.sessions.get(mark.sessionId)
    // Every message names the request; the name is built only when one is returned.
    const subject = () => describeMark(mark)
    if (session === undefined) {
      return { ...base, message: `${subject()} names a session that is not open in this context` }
    }
    if (!Number.isSafeInteger(mark.logLength) || mark.logLength < 0 || mark.logLength > session.seq) {
      return {
        ...base,
        message: `${subject()} claims more log than exists: the session has ${session.seq} event(s)`,
      }
    }
    let tracked = this.tracked.get(session)
    if (tracked === undefined) {
      tracked = track()
      this.tracked.set(session, tracked)
    }
    // An older prefix than the kept fold stands for: fold it afresh, keep the incremental state.
    const state = mark.logLength < tracked.fold.position ? track() : tracked
    const before = state.fold.folded
    const comparedBefore = state.verified.compared
    try {
      state.fold.advance(session, mark.logLength)
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      return { ...base, message: `${subject()} cannot be re-derived: folding the log failed: ${reason}` }
    } finally {
      this.folded += state.fold.folded - before
    }
    const header = state.fold.header
    if (header === undefined) {
      return {
        ...base,
        message: `${subject()} has no request/header before it; log a header snapshot before the first request`,
      }
    }
    if (state.shell?.header !== header || state.shell.request.sessionId !== mark.sessionId) {
      state.shell = shell(header, mark)
    }
    const { prefix } = state.shell
    const { fold, verified } = state
    const problem = compareRequestTo(
      state.shell.request,
      () => verified.compare(prefix, fold, request, prefix.length),
      request,
      prefix.length,
      verified.known,
    )
    this.compared += verified.compared - comparedBefore
    if (problem !== undefined) {
      return {
        ...base,
        message: `${subject()} is not what the log implies (header at seq ${header.seq}): ${problem}`,
      }
    }
    return adjacencyViolation(state.fold, prefix.length, subject, base)
  }
}

/**
 * The tool-adjacency verdict on a request derived from `fold`: the first problem the history gained
 * since the previous request, or calls still unanswered when the request is sent. `offset` is the
 * number of prefix messages before the history in the request; `subject` names the request in the
 * message (called only when there is a verdict).
 */
export function adjacencyViolation<T extends object>(
  fold: RequestFold,
  offset: number,
  subject: () => string,
  base: T,
): (T & { readonly message: string }) | undefined {
  const [broken] = fold.takeAdjacencyProblems()
  if (broken !== undefined) {
    return {
      ...base,
      message: `${subject()} breaks tool adjacency at messages[${offset + broken.index}]: ${broken.message}`,
    }
  }
  const unanswered = fold.unansweredCalls
  if (unanswered.length === 0) return undefined
  return {
    ...base,
    message: `${subject()} is sent while tool call(s) ${unanswered.join(', ')} of messages[${offset + fold.unansweredAt}] have no result`,
  }
}

function shell(header: HeaderState, mark: LoopRequestMark): Shell {
  const request = composeRequest(header.header, [], { sessionId: mark.sessionId })
  return { header, request, prefix: header.header.messagePrefix ?? [] }
}

/** How messages name a marked request: `the request marked for session S at log length N (turn T step K)`. */
export function describeMark(mark: LoopRequestMark): string {
  const step =
    mark.turn === undefined || mark.step === undefined ? '' : ` (turn ${mark.turn} step ${mark.step})`
  return `the request marked for session ${mark.sessionId} at log length ${mark.logLength}${step}`
}
