import type { Context } from 'cordis'
import { RequestChecker } from 'dsh-invariants'
import { type LlmRequest, loopRequestMark, markLoopRequest, userText } from 'dsh-llm'
import { textResponse } from 'dsh-llm/testing'
import { composeRequest, type Session } from 'dsh-session'
import { beforeEach, describe, expect, it } from 'vitest'
import type { Driver } from './driver.ts'
import { scriptedSession } from './scripted.ts'

let app: Context
let session: Session
let driver: Driver
let checker: RequestChecker

beforeEach(async () => {
  ;({ app, session, driver } = await scriptedSession(
    Array.from({ length: 8 }, (_, i) => textResponse(`r${i}`)),
    's-cost',
  ))
  driver.prompt('hello', 'm-hello')
  checker = new RequestChecker(app.sessions)
})

/** The request the agent loop builds now: the live header and the history as a view, marked. */
function loopRequest(): LlmRequest {
  const header = session.requestHeader()
  if (header === undefined) throw new Error('no header')
  const request = composeRequest(header.header, session.deriveHistory(), { sessionId: session.id })
  markLoopRequest(request, { sessionId: session.id, logLength: session.seq })
  return request
}

function verdict(request: LlmRequest): string | undefined {
  const mark = loopRequestMark(request)
  if (mark === undefined) throw new Error('unmarked request')
  return checker.verify(request, mark)?.message
}

/** `steps` loop requests, each checked, answered (its chunks logged) and followed by a user message. */
async function run(steps: number, build: () => LlmRequest = loopRequest): Promise<void> {
  for (let i = 0; i < steps; i++) {
    const request = build()
    expect(verdict(request)).toBeUndefined()
    await driver.call(request)
    driver.user(`next ${i}`, `m-next-${i}`)
  }
}

describe('the cost of the online request check', () => {
  it('folds past committed chunk events without rebuilding or even looking at them', async () => {
    // The checker reads the session through a wrapper that records every seq it reads or asks the
    // type of; it passes a step's chunk entries with one `nonChunkSeq`.
    const reads: number[] = []
    const reader = Object.create(session, {
      eventAt: {
        value: (seq: number) => {
          reads.push(seq)
          return session.eventAt(seq)
        },
      },
      eventTypeAt: {
        value: (seq: number) => {
          reads.push(seq)
          return session.eventTypeAt(seq)
        },
      },
    }) as Session
    checker = new RequestChecker({ get: (id) => (id === session.id ? reader : undefined) })
    await run(5)
    const chunkSeqs = new Set(session.events.filter((e) => e.type === 'assistant/chunk').map((e) => e.seq))
    expect(chunkSeqs.size).toBe(5 * textResponse('r0').length)
    expect(reads.filter((seq) => chunkSeqs.has(seq))).toEqual([])
    // Every committed event up to the last request still counts as folded once.
    expect(checker.eventsFolded).toBe(session.seq - 1 - textResponse('r4').length - 1)
  })

  it('compares only the messages new since the last request, plus two rechecks, for view-built requests', async () => {
    await run(6)
    // Request i carries 1 + 2i messages: the first is compared whole (1), the second its 2 new ones
    // and the 1 verified one (3), each later one its 2 new ones and 2 rechecks (4).
    expect(checker.messagesCompared).toBe(1 + 3 + 4 * 4)
    // A plain array (the request a listener copied) is compared whole: 13 messages.
    const copy = { ...loopRequest() }
    markLoopRequest(copy, { sessionId: session.id, logLength: session.seq })
    expect(verdict(copy)).toBeUndefined()
    expect(checker.messagesCompared).toBe(1 + 3 + 4 * 4 + 13)
  })

  it('catches, within the recheck sweep, a verified message the live store changed in place', async () => {
    await run(3)
    const store = [...session.deriveHistory().toArray()]
    expect(store).toHaveLength(7)
    const original = store[1]
    const forged = userText('forged', { kind: 'plugin', plugin: 'forger' })
    store[1] = forged
    // A store that breaks the append-only promise: it says it continues the verified view, yet
    // index 1, verified two requests ago, now holds another message.
    Object.defineProperty(session, 'deriveHistory', {
      value: () => ({
        length: store.length,
        toArray: () => Object.freeze(store.slice()),
        at: (i: number) => store[i],
        continues: () => true,
      }),
    })
    const verdicts = Array.from({ length: 4 }, () => verdict(loopRequest()))
    // Rechecks so far: index 0, then 1 and 2; now 3 and 4, 5 and 6, then 0 and 1 (7 messages).
    expect(verdicts.slice(0, 2)).toEqual([undefined, undefined])
    expect(verdicts[2]).toContain(
      `field messages differs at index 1 (history[1]): the log implies assistant message ${original?.id}`,
    )
    expect(verdicts[2]).toContain(
      `the request has user message ${forged.id} (source plugin forger, text "forged")`,
    )
    // Once caught, the next request is compared whole again, and fails again.
    expect(verdicts[3]).toBe(verdicts[2])
  })
})
