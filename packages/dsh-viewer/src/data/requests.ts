/** Every request the log implies, with the event each message came from and the diff to the one before. */

import { type ModelCall, reconstructRequests, splitModelCalls } from 'dsh-invariants'
import type { LlmRequest, Message, StreamChunk, Usage } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'
import { diffRequests } from './request-diff.ts'
import type { MessageSource, RequestView } from './types.ts'

interface Located {
  readonly index: number
  readonly chunks?: readonly [number, number]
}

/** Where each logged message is: message id → the event carrying it (the last one, for a repeat). */
function locateMessages(events: readonly SessionEvent[], calls: readonly ModelCall[]): Map<string, Located> {
  const where = new Map<string, Located>()
  let call = 0
  events.forEach((event, index) => {
    if (event.type === 'user/message') where.set((event.data as Message).id, { index })
    else if (event.type === 'tool/result')
      where.set((event.data as { message: Message }).message.id, { index })
    else if (event.type === 'assistant/message') {
      while (call + 1 < calls.length && (calls[call + 1] as ModelCall).start < index) call++
      const last = calls[call]
      const chunks = last !== undefined && last.start < index ? last.chunks : []
      const first = chunks[0]
      const end = chunks[chunks.length - 1]
      const located: Located =
        first === undefined || end === undefined ? { index } : { index, chunks: [first, end] }
      where.set((event.data as { message: Message }).message.id, located)
    }
  })
  return where
}

function sourceOf(
  events: readonly SessionEvent[],
  message: Message,
  position: number,
  header: { index: number; prefixLength: number },
  where: ReadonlyMap<string, Located>,
): MessageSource {
  let source: MessageSource
  if (position < header.prefixLength) source = { kind: 'event', index: header.index, prefixIndex: position }
  else {
    const located = where.get(message.id)
    if (located === undefined) return { kind: 'inline', message }
    source = {
      kind: 'event',
      index: located.index,
      ...(located.chunks === undefined ? {} : { chunks: located.chunks }),
    }
  }
  const event = events[source.index]
  const carried =
    event?.type === 'request/header'
      ? (event.data as { header: { messagePrefix?: readonly Message[] } }).header.messagePrefix?.[position]
      : event?.type === 'user/message'
        ? event.data
        : (event?.data as { message?: unknown } | undefined)?.message
  // Exactly as sent: a message no event carries verbatim is embedded instead of pointed at.
  return JSON.stringify(carried) === JSON.stringify(message) ? source : { kind: 'inline', message }
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}

function outcome(events: readonly SessionEvent[], call: ModelCall): { finish?: string; usage?: Usage } {
  let finish: string | undefined
  let usage: Usage | undefined
  for (const index of call.chunks) {
    const chunk = (events[index]?.data as { chunk?: StreamChunk } | undefined)?.chunk
    if (chunk === undefined) continue
    if (chunk.type === 'usage') usage = chunk.usage
    else if (chunk.type === 'finish') finish = chunk.reason.kind
  }
  return { ...(finish === undefined ? {} : { finish }), ...(usage === undefined ? {} : { usage }) }
}

/**
 * The requests of `events` (those `reconstructRequests` rebuilds: every model call after the first
 * `request/header`), each with its message sources past the part kept from the previous request.
 * Throws what `reconstructRequests` throws for a log it cannot fold.
 */
export function requestViews(events: readonly SessionEvent[]): RequestView[] {
  const calls = splitModelCalls(events)
  const rebuilt = reconstructRequests(events)
  const where = locateMessages(events, calls)
  const views: RequestView[] = []
  let headerIndex = -1
  let scanned = 0
  let previous: LlmRequest | undefined
  for (const call of calls) {
    for (; scanned < call.start; scanned++)
      if (events[scanned]?.type === 'request/header') headerIndex = scanned
    if (headerIndex < 0) continue
    const request = rebuilt[views.length]
    if (request === undefined) break
    const headerEvent = events[headerIndex] as SessionEvent
    const prefixLength =
      (headerEvent.data as { header: { messagePrefix?: readonly Message[] } }).header.messagePrefix?.length ??
      0
    const diff = diffRequests(previous, request, views.length === 0 ? undefined : views.length - 1)
    const header = { index: headerIndex, prefixLength }
    let shared = 0
    while (shared < diff.kept && sameJson(previous?.messages[shared], request.messages[shared])) shared++
    const sources = request.messages
      .slice(shared)
      .map((message, i) => sourceOf(events, message, shared + i, header, where))
    const first = call.chunks[0] ?? call.start
    const last = call.chunks[call.chunks.length - 1] ?? call.start
    views.push({
      number: views.length,
      turn: call.turn,
      step: call.step,
      start: call.start,
      header: headerIndex,
      shared,
      sources,
      messageCount: request.messages.length,
      diff,
      chunks: [first, last, call.chunks.length],
      ...outcome(events, call),
      startTime: events[first]?.time ?? 0,
      endTime: events[last]?.time ?? 0,
    })
    previous = request
  }
  return views
}
