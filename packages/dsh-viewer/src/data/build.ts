/** Builds the page's view model from a session log. */
import type { SessionEvent } from 'dsh-session'
import { inboxEvents, injectedMessages, repairClosers, violations } from './annotations.ts'
import { compactionViews } from './compactions.ts'
import { requestViews } from './requests.ts'
import { timeline } from './timeline.ts'
import type { RequestView, ViewData } from './types.ts'

/**
 * The view model of one log. Never throws for a broken log: violations are listed, and when the
 * requests cannot be reconstructed the reason is in `reconstructionError` and `requests` is empty.
 */
export function buildViewData(input: {
  file: string
  events: readonly SessionEvent[]
  sessionId?: string
  /** The file's final line, when the reader skipped it as torn. */
  tornLine?: number
}): ViewData {
  const { events } = input
  let requests: RequestView[] = []
  let reconstructionError: string | undefined
  try {
    requests = requestViews(events)
  } catch (error) {
    reconstructionError = error instanceof Error ? error.message : String(error)
  }
  return {
    file: input.file,
    ...(input.sessionId === undefined ? {} : { sessionId: input.sessionId }),
    events,
    turns: timeline(events, requests),
    requests,
    violations: violations(events),
    repairs: repairClosers(events),
    inbox: inboxEvents(events),
    injected: injectedMessages(events),
    compactions: compactionViews(events),
    ...(reconstructionError === undefined ? {} : { reconstructionError }),
    ...(input.tornLine === undefined ? {} : { tornLine: input.tornLine }),
  }
}
