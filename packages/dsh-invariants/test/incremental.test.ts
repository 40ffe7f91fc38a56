import type { Context } from 'cordis'
import { InvariantError, RequestChecker, RequestFold, verifyLoopRequest } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { type LlmRequest, loopRequestMark, type Message, markLoopRequest, userText } from 'dsh-llm'
import { textResponse } from 'dsh-llm/testing'
import { composeRequest, foldMessages, type Session, surfaceMessage } from 'dsh-session'
import { beforeEach, describe, expect, it } from 'vitest'
import { type Driver, HEADER } from './driver.ts'
import { scriptedSession } from './scripted.ts'

installInvariantGuard()

let app: Context
let session: Session
let driver: Driver
let checker: RequestChecker

beforeEach(async () => {
  ;({ app, session, driver } = await scriptedSession(
    Array.from({ length: 8 }, (_, i) => textResponse(`r${i}`)),
    's-1',
  ))
  driver.prompt('hello', 'm-hello')
  checker = new RequestChecker(app.sessions)
})

/** Checks `request` with the standalone checker; returns its message, or `undefined` when it passes. */
function verdict(request: LlmRequest): string | undefined {
  const mark = loopRequestMark(request)
  if (mark === undefined) throw new Error('unmarked request')
  return checker.verify(request, mark)?.message
}

/**
 * `steps` model calls, each checked by the standalone checker and by the mounted one, each followed by
 * a user message. Returns the log length the last request was marked with.
 */
async function run(steps: number): Promise<number> {
  let logLength = 0
  for (let i = 0; i < steps; i++) {
    const request = driver.request()
    logLength = session.seq
    expect(verdict(request)).toBeUndefined()
    await driver.call(request)
    driver.user(`next ${i}`, `m-next-${i}`)
  }
  return logLength
}

/** A copy of `request` carrying `messages`, marked at `logLength` (default: now). */
function withMessages(
  request: LlmRequest,
  messages: readonly Message[],
  logLength = session.seq,
): LlmRequest {
  const copy = { ...request, messages }
  markLoopRequest(copy, { sessionId: session.id, logLength })
  return copy
}

function subject(logLength: number, headerSeq = 3): string {
  return `the request marked for session s-1 at log length ${logLength} is not what the log implies (header at seq ${headerSeq})`
}

describe('incremental request reconstruction', () => {
  it('folds each committed event once however many requests it checks', async () => {
    const last = await run(5)
    expect(last).toBeGreaterThan(20)
    expect(checker.eventsFolded).toBe(last)
    expect(app.invariants.counters.requestsChecked).toBe(5)
  })

  it('catches a message smuggled at the end after earlier requests passed', async () => {
    await run(3)
    const request = driver.request()
    const smuggled = userText('psst', { kind: 'plugin', plugin: 'smuggler' })
    const bad = withMessages(request, [...request.messages, smuggled])
    expect(verdict(bad)).toBe(
      `${subject(session.seq)}: field messages differs at index 7: the log implies 7 message(s): 0 prefix + 7 history, but the request carries 8; extra user message ${smuggled.id} (source plugin smuggler, text "psst")`,
    )
    expect(() => app.llm.stream(bad)).toThrow(InvariantError)
    expect(app.invariants.takeViolations()).toHaveLength(1)
  })

  it('catches an earlier message the live cache swapped for a different object', async () => {
    await run(3)
    const live = session.deriveMessages()
    const [first, second] = live
    if (first === undefined || second === undefined) throw new Error('no history')
    // An equal copy is not the log's object, so it is compared in depth, and passes.
    const copy = { ...first, content: first.content.map((block) => ({ ...block })) }
    expect(verdict(withMessages(driver.request(), [copy, ...live.slice(1)]))).toBeUndefined()
    const edited = { ...second, content: [{ type: 'text' as const, text: 'r9' }] }
    Object.defineProperty(session, 'deriveMessages', { value: () => [first, edited, ...live.slice(2)] })
    expect(verdict(driver.request())).toBe(
      `${subject(session.seq)}: field messages differs at index 1 (history[1], message ${second.id}) at messages[1].content[0].text: the log implies "r0", the request has "r9"`,
    )
  })

  it('refolds at a surface replace, and refuses a request that kept the replaced history', async () => {
    await run(2)
    const stale = session.deriveMessages()
    const summary = userText('summary of the first four messages', { kind: 'plugin', plugin: 'compactor' })
    session.append('user/message', summary, {
      op: 'replace',
      start: 0,
      end: 4,
      sourceEventSeqs: seqsOf(0, 4),
    })
    const request = driver.request()
    expect(request.messages.map((message) => message.id)).toEqual([summary.id, 'm-next-1'])
    expect(verdict(request)).toBeUndefined()
    expect(verdict(withMessages(request, [...stale, summary]))).toBe(
      `${subject(session.seq)}: field messages differs at index 0 (history[0]): the log implies user message ${summary.id} (source plugin compactor, text "summary of the first four messages"), the request has user message m-hello (source user, text "hello")`,
    )
    await driver.call(request)
    driver.user('after the summary', 'm-after')
    expect(verdict(driver.request())).toBeUndefined()
  })

  it('catches a header change without a snapshot after the header was cached, and follows a logged one', async () => {
    await run(2)
    const warmer = { ...driver.request(), temperature: 0.2 }
    markLoopRequest(warmer, { sessionId: session.id, logLength: session.seq })
    expect(verdict(warmer)).toBe(
      `${subject(session.seq)}: field temperature differs at temperature: the log implies nothing, the request has 0.2`,
    )
    driver.header({ ...HEADER, config: { ...HEADER.config, temperature: 0.2 } }, 'change')
    const logged = driver.request()
    expect(logged.temperature).toBe(0.2)
    expect(verdict(logged)).toBe(undefined)
    const cooler = { ...logged, system: 'You are chatty.' }
    delete (cooler as { temperature?: number }).temperature
    markLoopRequest(cooler, { sessionId: session.id, logLength: session.seq })
    expect(verdict(cooler)).toBe(
      `${subject(session.seq, session.seq - 1)}: field temperature differs at temperature: the log implies 0.2, the request has nothing`,
    )
  })

  it('checks a request whose log length goes backwards against that older prefix, keeping its own fold', async () => {
    await run(2)
    const older = session.seq
    driver.user('one more', 'm-more')
    const later = driver.request()
    expect(verdict(later)).toBeUndefined()
    expect(later.messages).toHaveLength(6)
    const folded = checker.eventsFolded
    expect(folded).toBe(session.seq)
    // Built from the later log but marked at the older length: it carries a message from beyond it.
    const backdated = withMessages(later, later.messages, older)
    expect(verdict(backdated)).toBe(
      `${subject(older)}: field messages differs at index 5: the log implies 5 message(s): 0 prefix + 5 history, but the request carries 6; extra user message m-more (source user, text "one more")`,
    )
    // Honestly built from the older prefix: it passes, folded afresh.
    const header = session.requestHeader()
    if (header === undefined) throw new Error('no header')
    const honest = composeRequest(header.header, foldMessages(session.events.slice(0, older)), {
      sessionId: session.id,
    })
    markLoopRequest(honest, { sessionId: session.id, logLength: older })
    expect(verdict(honest)).toBeUndefined()
    expect(checker.eventsFolded).toBe(folded + 2 * older)
    // The kept fold was left where it stood: the next request folds only what is new.
    driver.user('and another', 'm-another')
    expect(verdict(driver.request())).toBeUndefined()
    expect(checker.eventsFolded).toBe(folded + 2 * older + 1)
  })

  it('gives the same verdict as a fresh fold for every request of a session with replaces and backdating', async () => {
    const fresh = (request: LlmRequest) => {
      const mark = loopRequestMark(request)
      if (mark === undefined) throw new Error('unmarked request')
      return verifyLoopRequest(app.sessions, request, mark)?.message
    }
    const requests: LlmRequest[] = []
    for (let i = 0; i < 12; i++) {
      driver.user(`u${i}`, `m-u${i}`)
      if (i % 5 === 4) {
        const summary = userText(`summary ${i}`)
        session.append('user/message', summary, {
          op: 'replace',
          start: 1,
          end: 3,
          sourceEventSeqs: seqsOf(1, 3),
        })
      }
      const request = driver.request()
      requests.push(request)
      const earlier = requests[Math.max(0, i - 3)]
      for (const candidate of [request, earlier, withMessages(request, request.messages.slice(1))]) {
        if (candidate === undefined) continue
        expect(verdict(candidate)).toBe(fresh(candidate))
      }
    }
  })
})

/** The seqs of the events behind surface nodes `[start, end)` of the session's current history. */
function seqsOf(start: number, end: number): number[] {
  const fold = new RequestFold()
  fold.advance(session.events, session.seq)
  const wanted = new Set(fold.history.slice(start, end))
  return session.events
    .filter((event) => {
      const message = surfaceMessage(event.type, event.data)
      return message !== undefined && wanted.has(message)
    })
    .map((event) => event.seq)
}
