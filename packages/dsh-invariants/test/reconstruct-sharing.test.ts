/**
 * Issue 30 item 3: offline reconstruction shares the history between consecutive requests, so
 * deriving a request costs O(1) in the history's length; each request still reads as the frozen
 * messages of its own prefix, also after a later surface replace changed the history.
 */
import { reconstructRequests } from 'dsh-invariants'
import { createAssistantMessage, createUserMessage, type Message } from 'dsh-llm'
import { foldMessages, type SessionEvent, type SurfaceMeta } from 'dsh-session'
import { describe, expect, it } from 'vitest'

function user(id: string): Message {
  return createUserMessage({ id, content: [{ type: 'text', text: id }], source: { kind: 'user' } })
}

/** A log of `turns` one-step turns, each after a user message; a replace of the first two messages before `replaceAt`. */
function log(turns: number, replaceAt?: number): SessionEvent[] {
  const events: SessionEvent[] = []
  const add = (type: string, data: unknown, surface?: SurfaceMeta) => {
    const seq = events.length
    events.push({ type, seq, time: seq, data, ...(surface ? { surface } : {}) } as SessionEvent)
  }
  add('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' })
  for (let turn = 1; turn <= turns; turn++) {
    if (turn === replaceAt) {
      add('user/message', user(`summary-${turn}`), {
        op: 'replace',
        start: 0,
        end: 2,
        sourceEventSeqs: [1, 5],
      })
    }
    add('user/message', user(`u${turn}`))
    add('turn/start', { turn, trigger: { kind: 'queued' } })
    add('step/start', { turn, step: 1 })
    add('assistant/chunk', { turn, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } })
    const message = createAssistantMessage({
      id: `a${turn}`,
      content: [{ type: 'text', text: `a${turn}` }],
      source: { kind: 'model', provider: 'p', model: 'm' },
    })
    add('assistant/message', { turn, step: 1, message })
    add('step/end', { turn, step: 1 })
    add('turn/end', { turn, reason: { kind: 'completed' } })
  }
  return events
}

describe('reconstructRequests shares the history between requests', () => {
  it('gives each request the frozen history of its own prefix', () => {
    const events = log(5)
    const requests = reconstructRequests(events)
    expect(requests.map((request) => request.messages.length)).toEqual([1, 3, 5, 7, 9])
    for (const request of requests) {
      expect(Object.isFrozen(request)).toBe(true)
      expect(Object.isFrozen(request.messages)).toBe(true)
      expect(request.messages).toBe(request.messages)
    }
    const third = events.findIndex((event) => event.type === 'assistant/chunk' && event.data.turn === 3)
    expect(requests[2]?.messages).toEqual(foldMessages(events.slice(0, third)))
  })

  it('keeps an earlier request unchanged by a later surface replace, read before or after', () => {
    const events = log(4, 3)
    const requests = reconstructRequests(events)
    const ids = (request: { readonly messages: readonly Message[] } | undefined) =>
      request?.messages.map((message) => message.id)
    // Request 1 is read only now, after the replace was folded; request 2 likewise.
    expect(ids(requests[0])).toEqual(['u1'])
    expect(ids(requests[1])).toEqual(['u1', 'a1', 'u2'])
    expect(ids(requests[2])).toEqual(['summary-3', 'u2', 'a2', 'u3'])
    expect(ids(requests[3])).toEqual(['summary-3', 'u2', 'a2', 'u3', 'a3', 'u4'])
  })
})
