import type { Context } from 'cordis'
import {
  applyInboxSplice,
  emptyInbox,
  type InboxState,
  type ProjectionDefinition,
  type Session,
  type SessionEvent,
} from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { mountSessions, refusal, user } from './support.ts'

/** Counts user messages; returns the same state for every other event. */
const userCount: ProjectionDefinition<number> = {
  key: 'user-count',
  init: () => 0,
  apply: (state, event) => (event.type === 'user/message' ? state + 1 : state),
}

const inbox: ProjectionDefinition<InboxState> = {
  key: 'inbox',
  init: () => emptyInbox,
  apply: (state, event) =>
    event.type === 'agent/inbox/spliced' ? applyInboxSplice(state, event.data, event.seq) : state,
}

async function withPlugin(app: Context, apply: (ctx: Context) => void) {
  const fiber = app.plugin({ inject: ['sessionProjections'], apply })
  await fiber
  return fiber
}

describe('SessionProjectionRegistry', () => {
  test('builds lazily over existing history, then stays current with each append', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    session.append('user/message', user('u2'))
    let inits = 0
    const init = () => {
      inits++
      return 0
    }
    app.sessionProjections.register({ ...userCount, init })
    expect(inits).toBe(0)
    expect(app.sessionProjections.get<number>(session, 'user-count')).toBe(2)
    expect(inits).toBe(1)
    session.append('user/message', user('u3'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    expect(app.sessionProjections.get<number>(session, 'user-count')).toBe(3)
    expect(inits).toBe(1)
  })

  test('is readable for a session with no agent, including one reopened from storage', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [user('a')] })
    await app.sessions.close(session)
    app.sessionProjections.register(inbox)
    const reopened = await app.sessions.open(session.id)
    expect(app.sessionProjections.get<InboxState>(reopened, 'inbox').nextTurn).toEqual([user('a')])
  })

  test('onChanged reports each change with the event that caused it, not unchanged states; listener errors are contained', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    app.sessionProjections.register(userCount)
    const changes: Array<[number, number]> = []
    app.sessionProjections.onChanged<number>('user-count', () => {
      throw new Error('listener failed')
    })
    app.sessionProjections.onChanged<number>('user-count', (changed: Session, state, event: SessionEvent) => {
      expect(changed).toBe(session)
      changes.push([state, event.seq])
    })
    session.append('user/message', user('u2'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('user/message', user('u3'))
    expect(changes).toEqual([
      [2, 1],
      [3, 3],
    ])
  })

  test('session/event listeners read states that already include the event', async () => {
    const app = await mountSessions()
    app.sessionProjections.register(userCount)
    const seen: number[] = []
    app.on(
      'session/event',
      (session) => void seen.push(app.sessionProjections.get<number>(session, 'user-count')),
    )
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    session.append('user/message', user('u2'))
    expect(seen).toEqual([1, 2])
  })

  test('registration is an effect of the registering fiber; a duplicate key is refused', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    const fiber = await withPlugin(app, (ctx) => void ctx.sessionProjections.register(userCount))
    expect(app.sessionProjections.get<number>(session, 'user-count')).toBe(0)
    expect(refusal(() => app.sessionProjections.register(userCount))).toEqual({
      code: 'DUPLICATE_PROJECTION',
      message: 'projection user-count is already registered',
    })
    await fiber.dispose()
    expect(refusal(() => app.sessionProjections.get(session, 'user-count'))).toEqual({
      code: 'UNKNOWN_PROJECTION',
      message: 'no projection registered under user-count',
    })
    const dispose = app.sessionProjections.register(userCount)
    expect(app.sessionProjections.get<number>(session, 'user-count')).toBe(0)
    await dispose()
    expect(() => app.sessionProjections.get(session, 'user-count')).toThrow('no projection registered')
  })

  test('a failing fold keeps its error: an invalid persisted splice is reported with its seq', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    app.sessionProjections.register(inbox)
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [user('a')] })
    session.append('agent/inbox/spliced', { target: 'next-step', start: 0, inserted: [user('a')] })
    session.append('user/message', user('later'))
    expect(refusal(() => app.sessionProjections.get(session, 'inbox'))).toEqual({
      code: 'INVALID_SPLICE',
      message: 'agent/inbox/spliced at seq 1: message a is already pending in the inbox',
    })
    expect(session.seq).toBe(3)
  })

  test('an optional state schema validates each new state', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    app.sessionProjections.register<number>({ ...userCount, key: 'capped', schema: z.number().max(1) })
    session.append('user/message', user('u1'))
    expect(app.sessionProjections.get<number>(session, 'capped')).toBe(1)
    session.append('user/message', user('u2'))
    expect(() => app.sessionProjections.get(session, 'capped')).toThrow('Too big: expected number to be <=1')
  })
})
