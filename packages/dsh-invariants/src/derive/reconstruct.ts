/**
 * Request reconstruction: every request the loop builds must be a pure function of its session log —
 * the latest `request/header` plus the history folded from the events before it. This module rebuilds
 * requests from a log and compares.
 */
import type { LlmRequest, LoopRequestMark, SessionId } from 'dsh-llm'
import {
  composeRequest,
  foldMessages,
  foldRequestHeader,
  type HeaderState,
  type SessionEvent,
  type SessionStore,
} from 'dsh-session'
import { ModelCallSplitter } from '../grammar/model-calls.ts'
import { RequestChecker } from '../online/request-checker.ts'
import type { Violation } from '../types.ts'
import { RequestFold } from './request-fold.ts'

/** A request re-derived from a log prefix, with the header snapshot it came from. */
export interface RebuiltRequest {
  readonly request: LlmRequest
  readonly header: HeaderState
}

/**
 * Rebuilds the request implied by `events` (a log prefix): a fresh fold of its surface (no cache shared
 * with any live session) under its latest `request/header`, composed by `composeRequest`. Returns
 * `undefined` when the prefix has no header yet. Throws what the fold throws for a surface replace
 * that does not fit.
 */
export function rebuildRequest(
  events: readonly SessionEvent[],
  sessionId?: SessionId,
): RebuiltRequest | undefined {
  const header = foldRequestHeader(events)
  if (header === undefined) return undefined
  const history = foldMessages(events)
  const request = composeRequest(header.header, history, sessionId === undefined ? {} : { sessionId })
  return { request, header }
}

/**
 * Checks one marked request against its re-derivation from the live session named by its mark, from
 * the first `mark.logLength` of `session.events` folded afresh — never the session's own caches.
 * Returns `undefined` when they agree, else the violation naming the first differing field (and
 * message index). Costs a fold of the whole prefix; the mounted check (`ctx.invariants`) keeps its
 * fold per session instead and pays only for the events logged since the previous request.
 */
export function verifyLoopRequest(
  sessions: Pick<SessionStore, 'get'>,
  request: LlmRequest,
  mark: LoopRequestMark,
): Violation | undefined {
  return new RequestChecker(sessions).verify(request, mark)
}

/**
 * Re-derives requests event by event: `push(event)` returns the request of the model call that `event`
 * opens (composed from the header and history folded from the events before it, frozen), else
 * `undefined`. Keeps only the fold, so a log too large to hold can be re-derived as it is read.
 * Consecutive requests share the fold's history: a request's `messages` array is built (frozen) when
 * it is first read and kept by that request, so deriving costs O(1) per request in the history's
 * length and holding every request of a log costs memory linear in the log until their messages are read.
 */
export class RequestDeriver {
  private readonly fold = new RequestFold()
  private readonly calls = new ModelCallSplitter()
  private index = 0
  private readonly extras: { readonly sessionId?: SessionId }

  constructor(sessionId?: SessionId) {
    this.extras = sessionId === undefined ? {} : { sessionId }
  }

  /** Folds `event`; returns the request of the call it opens, if it opens one under a header. */
  push(event: SessionEvent): LlmRequest | undefined {
    const opened = this.calls.push(event, this.index++).opened
    const header = this.fold.header
    const request =
      opened === undefined || header === undefined
        ? undefined
        : composeRequest(header.header, this.fold.historyView(), this.extras)
    this.fold.push(event)
    return request
  }
}

/**
 * Every request the log implies, in order: one per model call, re-derived from the events before the
 * call's first `assistant/chunk` (only surface events and `request/header` affect a request, so the
 * inbox splices a loop may log between building a request and its first chunk make no difference).
 * A call with no header before it is skipped (the log grammar reports it). Requests carry the
 * session's id only when `sessionId` is given. Returns a frozen array of frozen requests. One pass
 * (`RequestDeriver`). Throws what the fold throws for a surface replace that does not fit.
 */
export function reconstructRequests(
  events: readonly SessionEvent[],
  sessionId?: SessionId,
): readonly LlmRequest[] {
  const out: LlmRequest[] = []
  const deriver = new RequestDeriver(sessionId)
  for (const event of events) {
    const request = deriver.push(event)
    if (request !== undefined) out.push(request)
  }
  return Object.freeze(out)
}
