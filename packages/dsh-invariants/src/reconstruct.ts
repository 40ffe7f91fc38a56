/**
 * Request reconstruction: every request the loop builds must be a pure function of its session log —
 * the latest `request/header` plus the history folded from the events before it. This module rebuilds
 * requests from a log, from scratch, and compares.
 */
import { deepFreeze, type LlmRequest, type LoopRequestMark, type SessionId } from 'dsh-llm'
import {
  composeRequest,
  foldMessages,
  foldRequestHeader,
  type HeaderState,
  type SessionEvent,
  type SessionStore,
} from 'dsh-session'
import { compareRequests } from './compare.ts'
import { splitModelCalls } from './model-calls.ts'
import type { Violation } from './types.ts'

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
 * Checks one marked request against its re-derivation from the live session named by its mark, using
 * `session.events.slice(0, mark.logLength)` — never the session's own caches. Returns `undefined` when
 * they agree, else the violation naming the first differing field (and message index).
 */
export function verifyLoopRequest(
  sessions: Pick<SessionStore, 'get'>,
  request: LlmRequest,
  mark: LoopRequestMark,
): Violation | undefined {
  const base = { check: 'request-reconstruction', sessionId: mark.sessionId } as const
  const session = sessions.get(mark.sessionId)
  const subject = `the request marked for session ${mark.sessionId} at log length ${mark.logLength}`
  if (session === undefined) {
    return { ...base, message: `${subject} names a session that is not open in this context` }
  }
  if (!Number.isSafeInteger(mark.logLength) || mark.logLength < 0 || mark.logLength > session.events.length) {
    return {
      ...base,
      message: `${subject} claims more log than exists: the session has ${session.events.length} event(s)`,
    }
  }
  let rebuilt: RebuiltRequest | undefined
  try {
    rebuilt = rebuildRequest(session.events.slice(0, mark.logLength), mark.sessionId)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return { ...base, message: `${subject} cannot be re-derived: folding the log failed: ${reason}` }
  }
  if (rebuilt === undefined) {
    return {
      ...base,
      message: `${subject} has no request/header before it; log a header snapshot before the first request`,
    }
  }
  const problem = compareRequests(rebuilt.request, request, rebuilt.header.header.messagePrefix?.length ?? 0)
  if (problem === undefined) return undefined
  return {
    ...base,
    message: `${subject} is not what the log implies (header at seq ${rebuilt.header.seq}): ${problem}`,
  }
}

/**
 * Every request the log implies, in order: one per model call, re-derived from the events before the
 * call's first `assistant/chunk` (only surface events and `request/header` affect a request, so the
 * inbox splices a loop may log between building a request and its first chunk make no difference).
 * A call with no header before it is skipped (the log grammar reports it). Requests carry the
 * session's id only when `sessionId` is given. Returns a frozen array of frozen requests. Each
 * request is folded from scratch, so the cost is (model calls) × (log length).
 */
export function reconstructRequests(
  events: readonly SessionEvent[],
  sessionId?: SessionId,
): readonly LlmRequest[] {
  const out: LlmRequest[] = []
  for (const call of splitModelCalls(events)) {
    const rebuilt = rebuildRequest(events.slice(0, call.start), sessionId)
    if (rebuilt !== undefined) out.push(deepFreeze(rebuilt.request))
  }
  return Object.freeze(out)
}
