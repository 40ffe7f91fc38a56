/**
 * Resolving a request's messages from the log: pure functions over the view data, shared by the page
 * and the tests. No Node imports.
 */
import type { Message } from 'dsh-llm'
import type { RequestHeader, SessionEvent } from 'dsh-session'
import type { MessageSource, RequestView } from './types.ts'

/** The message a source points at. Throws `TypeError` naming the index when the event carries none. */
export function resolveMessage(events: readonly SessionEvent[], source: MessageSource): Message {
  if (source.kind === 'inline') return source.message
  const event = events[source.index]
  const data = event?.data as { message?: Message; header?: RequestHeader } | Message | undefined
  let message: Message | undefined
  if (event?.type === 'user/message') message = data as Message
  else if (event?.type === 'assistant/message' || event?.type === 'tool/result') {
    message = (data as { message?: Message }).message
  } else if (event?.type === 'request/header' && source.prefixIndex !== undefined) {
    message = (data as { header?: RequestHeader }).header?.messagePrefix?.[source.prefixIndex]
  }
  if (message === undefined) throw new TypeError(`event at index ${source.index} carries no message`)
  return message
}

/**
 * The full source list of request `number`: the kept sources of the requests before it, then its own.
 * Walks back only as far as needed; linear in the request's message count plus the chain length.
 */
export function requestSources(requests: readonly RequestView[], number: number): MessageSource[] {
  const chain: RequestView[] = []
  let needed = Number.POSITIVE_INFINITY
  for (let n: number | undefined = number; n !== undefined && needed > 0; ) {
    const request: RequestView | undefined = requests[n]
    if (request === undefined) break
    chain.push(request)
    needed = Math.min(needed, request.shared)
    n = request.diff.previous
  }
  const out: MessageSource[] = []
  for (let i = chain.length - 1; i >= 0; i--) {
    const request = chain[i] as RequestView
    out.length = request.shared
    out.push(...request.sources)
  }
  return out
}

/** The messages of request `number`, exactly as sent, each with the source it came from. */
export function requestMessages(
  events: readonly SessionEvent[],
  requests: readonly RequestView[],
  number: number,
): { message: Message; source: MessageSource }[] {
  return requestSources(requests, number).map((source) => ({
    message: resolveMessage(events, source),
    source,
  }))
}
