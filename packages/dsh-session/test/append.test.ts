import { Context } from 'cordis'
import Sessions, { type Session, SessionError } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { assistant, mountSessions, types, user } from './support.ts'

/** Runs `fn`, expecting a SessionError; returns `{code, message, where}`. */
function refusal(fn: () => unknown) {
  try {
    fn()
  } catch (error) {
    if (!(error instanceof SessionError)) throw error
    return { code: error.code, message: error.message, where: error.where }
  }
  throw new Error('expected a SessionError')
}

async function openTurn(): Promise<Session> {
  const app = await mountSessions()
  const session = await app.sessions.create()
  session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
  session.append('step/start', { turn: 1, step: 1 })
  return session
}

describe('append snapshots data as plain JSON', () => {
  test('a value JSON cannot carry is refused with the event type and path; the log is unchanged', async () => {
    const session = await openTurn()
    const before = [...session.events]
    const message = {
      ...assistant('a1', [{ type: 'text', text: 'x' }]),
      content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, 10n],
    }
    expect(
      refusal(() => session.append('assistant/message', { turn: 1, step: 1, message } as never)),
    ).toEqual({
      code: 'NOT_JSON',
      message: 'assistant/message: data.message.content[2] is a BigInt; event data must be plain JSON',
      where: { eventType: 'assistant/message', path: 'data.message.content[2]' },
    })
    expect(session.events).toEqual(before)
    expect(session.seq).toBe(2)
  })

  test.each([
    ['a function', { fn: () => 1 }, 'data.source.fn is a function'],
    ['a symbol', { s: Symbol('x') }, 'data.source.s is a symbol'],
    ['NaN', { n: Number.NaN }, 'data.source.n is NaN'],
    ['Infinity', { n: Number.POSITIVE_INFINITY }, 'data.source.n is Infinity'],
    ['-Infinity', { n: Number.NEGATIVE_INFINITY }, 'data.source.n is -Infinity'],
    ['-0', { n: -0 }, 'data.source.n is -0'],
    ['an undefined member', { u: undefined }, 'data.source.u is undefined'],
    ['an undefined array element', { list: [1, undefined] }, 'data.source.list[1] is undefined'],
    ['an array hole', { list: new Array(2) }, 'data.source.list[0] is undefined'],
    ['a class instance', { when: new Date(0) }, 'data.source.when is an instance of Date'],
    ['a Map', { map: new Map() }, 'data.source.map is an instance of Map'],
    ['an odd key', { 'a-b': 1n }, 'data.source["a-b"] is a BigInt'],
  ])('refuses %s', async (_name, extra, problem) => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    const message = { ...user('u1'), source: { kind: 'user', ...extra } }
    expect(refusal(() => session.append('user/message', message as never)).message).toBe(
      `user/message: ${problem}; event data must be plain JSON`,
    )
    expect(session.events).toEqual([])
  })

  test('refuses a cycle, but copies a shared acyclic value per occurrence', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    const loop: Record<string, unknown> = { kind: 'plugin', plugin: 'x' }
    loop.self = loop
    expect(
      refusal(() => session.append('user/message', { ...user('u1'), source: loop } as never)).message,
    ).toBe('user/message: data.source.self is a cycle (it contains itself); event data must be plain JSON')
    const shared = { type: 'text' as const, text: 'same' }
    const event = session.append('user/message', { ...user('u2'), content: [shared, shared] })
    expect(event.data.content).toEqual([shared, shared])
    expect(event.data.content[0]).not.toBe(shared)
  })

  test('a null-prototype object is plain JSON', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    const source = Object.assign(Object.create(null) as object, { kind: 'user' })
    expect(session.append('user/message', { ...user('u1'), source } as never).data.source).toEqual({
      kind: 'user',
    })
  })

  test('the committed event is detached from the input and deep-frozen', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    const input = {
      id: 'u1',
      role: 'user',
      content: [{ type: 'text', text: 'hi' }],
      source: { kind: 'user' },
    }
    const event = session.append('user/message', input as never)
    input.content[0] = { type: 'text', text: 'changed' }
    expect(event).toEqual({
      type: 'user/message',
      seq: 0,
      time: 1001,
      data: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } },
    })
    expect(Object.isFrozen(event)).toBe(true)
    expect(Object.isFrozen(event.data)).toBe(true)
    expect(Object.isFrozen(event.data.content)).toBe(true)
    expect(Object.isFrozen(event.data.content[0])).toBe(true)
    expect(Object.isFrozen(event.data.source)).toBe(true)
  })
})

describe('append validates payloads', () => {
  test('a payload that fails its schema names the type, seq and zod path', async () => {
    const session = await openTurn()
    const message = assistant('a1', [{ type: 'text', text: 'x' }])
    const bad = {
      ...message,
      content: [
        { type: 'text', text: 'ok' },
        { type: 'text', text: 3 },
      ],
    }
    expect(
      refusal(() => session.append('assistant/message', { turn: 1, step: 1, message: bad } as never)),
    ).toEqual({
      code: 'INVALID_EVENT',
      message:
        'invalid assistant/message event at seq 2: data.message.content[1].text: Invalid input: expected string, received number',
      where: { eventType: 'assistant/message', seq: 2, path: 'data.message.content[1].text' },
    })
    expect(session.seq).toBe(2)
  })

  test('unknown content block kinds pass through (the vocabulary is open)', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    const image = { type: 'image', url: 'file:///a.png' }
    const event = session.append('user/message', { ...user('u1'), content: [image] } as never)
    expect(event.data.content).toEqual([image])
  })

  test('an unknown event type is refused by name', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    expect(refusal(() => session.append('no/such' as never, {} as never))).toEqual({
      code: 'UNKNOWN_EVENT_TYPE',
      message: 'unknown event type no/such at seq 0',
      where: { eventType: 'no/such', seq: 0 },
    })
  })
})

describe('session/event notification', () => {
  test('a throwing listener neither un-commits the append nor starves the other listeners', async () => {
    const app = await mountSessions()
    const warnings: unknown[] = []
    app.logger.exporter({
      export: (message) => void warnings.push([message.type, message.name, message.args[0]]),
    })
    const seen: string[] = []
    app.on('session/event', (_session, event) => void seen.push(`first ${event.seq}`))
    app.on('session/event', () => {
      throw new Error('listener failed')
    })
    app.on('session/event', (_session, event) => void seen.push(`third ${event.seq}`))
    const session = await app.sessions.create()
    const event = session.append('user/message', user('u1'))
    expect(event.seq).toBe(0)
    expect(types(session.events)).toEqual(['user/message'])
    expect(seen).toEqual(['first 0', 'third 0'])
    expect(warnings).toEqual([['warn', 'dsh', 'listener of session/event threw: %s']])
  })

  test('a listener goes away with the fiber that registered it; a rejected promise is contained too', async () => {
    const app = await mountSessions()
    const warnings: unknown[] = []
    app.logger.exporter({ export: (message) => void warnings.push(message.args[0]) })
    const seen: number[] = []
    const fiber = app.plugin({
      apply(ctx: Context) {
        ctx.on('session/event', (_session, event) => void seen.push(event.seq))
        ctx.on('session/event', () => Promise.reject(new Error('async listener failed')))
      },
    })
    await fiber
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    await Promise.resolve()
    await fiber.dispose()
    session.append('user/message', user('u2'))
    await Promise.resolve()
    expect(seen).toEqual([0])
    expect(warnings).toEqual(['listener of session/event threw: %s'])
  })

  test('appending from inside a session/event notification throws REENTRANT_APPEND; the log keeps the first event', async () => {
    const app = await mountSessions()
    const errors: unknown[] = []
    app.on('session/event', (session, event) => {
      if (event.seq !== 0) return
      try {
        session.append('user/message', user('u2'))
      } catch (error) {
        errors.push(error)
      }
    })
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(SessionError)
    expect((errors[0] as SessionError).code).toBe('REENTRANT_APPEND')
    expect((errors[0] as SessionError).message).toBe(
      `session ${session.id}: cannot append user/message from inside the session/event notification of user/message at seq 0`,
    )
    expect(types(session.events)).toEqual(['user/message'])
    session.append('user/message', user('u3'))
    expect(session.seq).toBe(2)
  })
})

describe('append guards', () => {
  test('a guard sees the candidate and can refuse it; the log is unchanged; the guard goes with its fiber', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    const seen: number[] = []
    const fiber = app.plugin({
      inject: ['sessions'],
      apply(ctx: Context) {
        ctx.sessions.guard((_session, candidate) => {
          seen.push(candidate.seq)
          if (candidate.type === 'user/message' && candidate.data.id === 'bad')
            throw new Error('refused by guard')
        })
      },
    })
    await fiber
    session.append('user/message', user('u1'))
    expect(() => session.append('user/message', user('bad'))).toThrow('refused by guard')
    expect(types(session.events)).toEqual(['user/message'])
    await fiber.dispose()
    session.append('user/message', user('bad'))
    expect(seen).toEqual([0, 1])
    expect(session.seq).toBe(2)
  })
})

test('a closed session refuses appends', async () => {
  const app = new Context()
  await app.plugin(Sessions)
  const session = await app.sessions.create()
  await app.sessions.close(session)
  expect(refusal(() => session.append('user/message', user('u1')))).toEqual({
    code: 'CLOSED',
    message: `session ${session.id} is closed; cannot append user/message`,
    where: { sessionId: session.id, eventType: 'user/message', seq: 0 },
  })
})
