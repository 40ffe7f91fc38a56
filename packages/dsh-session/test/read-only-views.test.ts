/**
 * Issue 12 item 9, every way in: each mutation a caller can attempt on what a session hands out
 * (`events` and the events in it, derived messages and history views, the header snapshot, the open
 * turn, load report and parent, snapshots of appended data) either throws a TypeError (this module
 * is strict code) or a READ_ONLY error, and neither the log nor the next request derived from it
 * changes.
 */
import { CallId, type LlmRequest, type Message } from 'dsh-llm'
import { composeRequest, type HistoryView, type Session, type SessionEvent } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { assistant, callBlock, mountSessions, toolResult, user } from './support.ts'

const header = {
  config: { provider: 'p', model: 'm', stop: ['END'] },
  system: 'be brief',
  tools: [{ name: 'read', description: 'reads', parameters: { type: 'object', properties: { path: {} } } }],
  messagePrefix: [user('prefix', 'opening')],
}

/** A session with a header, one finished step (its chunk events folded into a run) and an open step. */
async function sessionWithHistory(): Promise<Session> {
  const app = await mountSessions()
  const session = await app.sessions.create()
  session.append('user/message', user('u1', 'hello'))
  session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
  session.append('request/header', { header, reason: 'initial' })
  session.append('step/start', { turn: 1, step: 1 })
  session.append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'block-start', index: 0, blockType: 'text' },
  })
  session.append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'text-delta', index: 0, text: 'on it' },
  })
  session.append('assistant/message', {
    turn: 1,
    step: 1,
    message: assistant('a1', [{ type: 'text', text: 'on it' }, callBlock('c1')]),
  })
  session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: CallId('c1'),
    name: 'read',
    arguments: '{"path":"a"}',
  })
  session.append('tool/result', { turn: 1, step: 1, message: toolResult('r1', 'c1', 'contents') })
  session.append('step/end', { turn: 1, step: 1 })
  session.append('step/start', { turn: 1, step: 2 })
  return session
}

/** The request the loop would derive now. */
function nextRequest(session: Session): LlmRequest {
  const state = session.requestHeader()
  if (state === undefined) throw new Error('no header')
  return composeRequest(state.header, session.deriveMessages())
}

/** Everything observable about the log and what is derived from it, as plain JSON. */
function observe(session: Session) {
  const request = nextRequest(session)
  return JSON.parse(
    JSON.stringify({
      events: session.events.slice(),
      seq: session.seq,
      messages: session.deriveMessages(),
      history: session.deriveHistory().toArray(),
      header: session.requestHeader(),
      openTurn: session.openTurn(),
      request: { ...request, messages: request.messages },
    }),
  ) as unknown
}

/** Runs `attempt` and returns the name of the error it threw (`none` if it did not throw). */
function thrown(attempt: () => unknown): string {
  try {
    attempt()
    return 'none'
  } catch (error) {
    if (error instanceof TypeError) return 'TypeError'
    return (error as { code?: string }).code ?? String(error)
  }
}

type Attempts = Record<string, () => unknown>

/** Asserts every attempt throws (TypeError or READ_ONLY) and that nothing observable changed. */
function expectRefused(session: Session, attempts: Attempts, allowed = ['TypeError']): void {
  const before = observe(session)
  const outcomes = Object.fromEntries(
    Object.entries(attempts).map(([name, attempt]) => [name, thrown(attempt)]),
  )
  expect(Object.entries(outcomes).filter(([, outcome]) => !allowed.includes(outcome))).toEqual([])
  expect(observe(session)).toEqual(before)
}

describe('9. read-only views: session.events', () => {
  it('refuses assignment, length, property definition and deletion through the view', async () => {
    const session = await sessionWithHistory()
    const events = session.events as SessionEvent[]
    const first = events[0] as SessionEvent
    const second = events[1] as SessionEvent
    const attempts: Attempts = {
      'index assignment': () => {
        events[0] = first
      },
      'assignment past the end': () => {
        events[events.length] = first
      },
      'length = 0': () => {
        events.length = 0
      },
      'length = 100': () => {
        events.length = 100
      },
      defineProperty: () => Object.defineProperty(events, 0, { value: second }),
      'defineProperty of a new key': () => Object.defineProperty(events, 'extra', { value: 1 }),
      delete: () => delete events[0],
      setPrototypeOf: () => Object.setPrototypeOf(events, Array.prototype),
      'expando property': () => {
        ;(events as unknown as Record<string, unknown>).extra = 1
      },
    }
    expectRefused(session, attempts)
    expect(Reflect.set(events, 0, first)).toBe(false)
    expect(Reflect.deleteProperty(events, 0)).toBe(false)
    expect(Reflect.defineProperty(events, 0, { value: second })).toBe(false)
    // The array is frozen already (issue 30: a plain frozen array), so freezing it again or
    // preventing extensions is a no-op that changes nothing, and later appends still commit.
    expect(Object.isFrozen(events)).toBe(true)
    const before = observe(session)
    expect(Object.freeze(events)).toBe(events)
    expect(Object.preventExtensions(events)).toBe(events)
    expect(observe(session)).toEqual(before)
    session.append('step/end', { turn: 1, step: 2 })
    expect(session.events.length).toBe(events.length + 1)
  })

  it('refuses the in-place array methods, called as methods or through Array.prototype', async () => {
    const session = await sessionWithHistory()
    const events = session.events as SessionEvent[]
    const first = events[0] as SessionEvent
    const proto = Array.prototype
    const internal = events as unknown as { add(event: SessionEvent): void }
    expectRefused(
      session,
      {
        push: () => events.push(first),
        pop: () => events.pop(),
        shift: () => events.shift(),
        unshift: () => events.unshift(first),
        splice: () => events.splice(0, 1),
        sort: () => events.sort(),
        reverse: () => events.reverse(),
        fill: () => events.fill(first),
        copyWithin: () => events.copyWithin(0, 1),
        'Array.prototype.push': () => proto.push.call(events, first),
        'Array.prototype.pop': () => proto.pop.call(events),
        'Array.prototype.shift': () => proto.shift.call(events),
        'Array.prototype.unshift': () => proto.unshift.call(events, first),
        'Array.prototype.splice': () => proto.splice.call(events, 0, 1),
        'Array.prototype.sort': () =>
          proto.sort.call(events, (a: SessionEvent, b: SessionEvent) => b.seq - a.seq),
        'Array.prototype.reverse': () => proto.reverse.call(events),
        'Array.prototype.fill': () => proto.fill.call(events, first),
        'Array.prototype.copyWithin': () => proto.copyWithin.call(events, 0, 1),
        'the log’s own add': () => internal.add({ ...first, seq: events.length }),
      },
      ['TypeError', 'READ_ONLY'],
    )
  })

  it('refuses changes to every event and its nested payload, a folded chunk event included', async () => {
    const session = await sessionWithHistory()
    const events = session.events
    const attempts: Attempts = {}
    for (const event of events) {
      const at = `${event.type}@${event.seq}`
      const mutable = event as unknown as Record<string, unknown>
      attempts[`${at} seq`] = () => {
        mutable.seq = 99
      }
      attempts[`${at} data`] = () => {
        mutable.data = {}
      }
      attempts[`${at} delete type`] = () => delete mutable.type
      attempts[`${at} new member`] = () => {
        mutable.extra = 1
      }
      walk(event.data, (path, node) => {
        const record = node as Record<string, unknown>
        if (Array.isArray(node)) {
          attempts[`${at} ${path}.push`] = () => (node as unknown[]).push(1)
          attempts[`${at} ${path}[0] =`] = () => {
            ;(node as unknown[])[0] = 1
          }
          attempts[`${at} ${path}.length = 0`] = () => {
            ;(node as unknown[]).length = 0
          }
          return
        }
        for (const key of Object.keys(record)) {
          attempts[`${at} ${path}.${key} =`] = () => {
            record[key] = 'changed'
          }
          attempts[`${at} delete ${path}.${key}`] = () => delete record[key]
        }
        attempts[`${at} ${path} defineProperty`] = () => Object.defineProperty(record, 'extra', { value: 1 })
      })
    }
    expect(Object.keys(attempts).length).toBeGreaterThan(100)
    expectRefused(session, attempts)
  })
})

describe('9. read-only views: projections and snapshots', () => {
  it('refuses changes to derived messages, their blocks and the request built from them', async () => {
    const session = await sessionWithHistory()
    const messages = session.deriveMessages() as Message[]
    const request = nextRequest(session)
    const attempts: Attempts = {
      'messages.push': () => messages.push(user('x')),
      'messages[0] =': () => {
        messages[0] = user('x')
      },
      'messages.length = 0': () => {
        messages.length = 0
      },
      'messages.reverse': () => messages.reverse(),
      'request.messages.pop': () => (request.messages as Message[]).pop(),
      'request.model =': () => {
        ;(request as { model: string }).model = 'other'
      },
      'request.tools.push': () => (request.tools as unknown[]).push({}),
    }
    walk(messages, (path, node) => {
      if (Array.isArray(node)) {
        attempts[`${path}.push`] = () => (node as unknown[]).push(1)
        return
      }
      for (const key of Object.keys(node as object)) {
        attempts[`${path}.${key} =`] = () => {
          ;(node as Record<string, unknown>)[key] = 'changed'
        }
      }
    })
    expectRefused(session, attempts)
  })

  it('refuses changes to a history view, before and after its array is built', async () => {
    const session = await sessionWithHistory()
    const view = session.deriveHistory() as unknown as Record<string, unknown>
    const attempts: Attempts = {
      'length = 0': () => {
        view.length = 0
      },
      'toArray =': () => {
        view.toArray = () => []
      },
      'new member': () => {
        view.extra = 1
      },
      defineProperty: () => Object.defineProperty(view, 'length', { value: 0 }),
    }
    expectRefused(session, attempts)
    expect(session.deriveHistory().toArray()).toEqual(session.deriveMessages())
    expect(view.length).toBe(3)
    const array = (view as unknown as HistoryView).toArray() as Message[]
    expect(array.map((message) => message.id)).toEqual(['u1', 'a1', 'r1'])
    expectRefused(session, { ...attempts, 'array.push': () => array.push(user('x')) })
  })

  it('refuses changes to the header snapshot, the open turn and a fork’s parent', async () => {
    const session = await sessionWithHistory()
    const state = session.requestHeader()
    const turn = session.openTurn()
    const app = await mountSessions()
    const forked = await app.sessions.create()
    forked.append('user/message', user('f1'))
    const child = await app.sessions.fork(forked, 1)
    const attempts: Attempts = {
      'openTurn.step =': () => {
        ;(turn as { step: number }).step = 9
      },
      'parent.seedLength =': () => {
        ;(child.parent as { seedLength: number }).seedLength = 0
      },
    }
    walk(state, (path, node) => {
      if (Array.isArray(node)) {
        attempts[`header ${path}.push`] = () => (node as unknown[]).push(1)
        return
      }
      for (const key of Object.keys(node as object)) {
        attempts[`header ${path}.${key} =`] = () => {
          ;(node as Record<string, unknown>)[key] = 'changed'
        }
      }
    })
    expect(Object.keys(attempts).length).toBeGreaterThan(20)
    expectRefused(session, attempts)
    expect(child.parent).toEqual({ sessionId: forked.id, seedLength: 1 })
  })

  it('snapshots appended data: changing the caller’s object afterwards changes neither the log nor the request', async () => {
    const session = await sessionWithHistory()
    const data = {
      turn: 1,
      step: 2,
      message: {
        id: 'a2',
        role: 'assistant',
        content: [{ type: 'text', text: 'done' }],
        source: { kind: 'model', provider: 'p', model: 'm' },
      },
    }
    const event = session.append('assistant/message', data as never)
    const before = observe(session)
    data.message.content.push({ type: 'text', text: 'sneaked in' })
    ;(data.message.content[0] as { text: string }).text = 'changed'
    data.message.id = 'other'
    expect(observe(session)).toEqual(before)
    expect(event.data.message.content).toEqual([{ type: 'text', text: 'done' }])
    expect(thrown(() => (event.data.message.content as unknown[]).push(1))).toBe('TypeError')
  })
})

/** Calls `visit` on every object and array under `value` (itself included), with its path. */
function walk(value: unknown, visit: (path: string, node: object) => void, path = '$'): void {
  if (typeof value !== 'object' || value === null) return
  visit(path, value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(value[i], visit, `${path}[${i}]`)
  } else for (const [key, member] of Object.entries(value)) walk(member, visit, `${path}.${key}`)
}
