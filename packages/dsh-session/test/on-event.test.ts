import type { Context } from 'cordis'
import { SessionError } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { mountSessions, types, user } from './support.ts'

describe('sessions.onEvent', () => {
  test('calls each listener after every committed event, after session/event, in registration order', async () => {
    const app = await mountSessions()
    const seen: string[] = []
    app.on('session/event', (_session, event) => void seen.push(`on ${event.seq}`))
    app.sessions.onEvent((_session, event) => void seen.push(`first ${event.seq}`))
    app.sessions.onEvent((session, event) => void seen.push(`second ${event.seq} of ${session.seq}`))
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    session.append('user/message', user('u2'))
    expect(seen).toEqual(['on 0', 'first 0', 'second 0 of 1', 'on 1', 'first 1', 'second 1 of 2'])
  })

  test('a throwing listener is logged with the event it threw at, and the others still run', async () => {
    const app = await mountSessions()
    const warnings: unknown[][] = []
    app.logger.exporter({ export: (message) => void warnings.push(message.args) })
    const seen: number[] = []
    app.sessions.onEvent(() => {
      throw new Error('listener failed')
    })
    app.sessions.onEvent((_session, event) => void seen.push(event.seq))
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    expect(seen).toEqual([0])
    expect(warnings.map((args) => args[0])).toEqual([
      'session event listener threw at user/message seq 0: %s',
    ])
    expect(String(warnings[0]?.[1])).toContain('listener failed')
  })

  test('a listener goes away with its fiber or its disposer', async () => {
    const app = await mountSessions()
    const seen: string[] = []
    const fiber = app.plugin({
      inject: ['sessions'],
      apply(ctx: Context) {
        ctx.sessions.onEvent((_session, event) => void seen.push(`fiber ${event.seq}`))
      },
    })
    await fiber
    const dispose = app.sessions.onEvent((_session, event) => void seen.push(`disposer ${event.seq}`))
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    await fiber.dispose()
    session.append('user/message', user('u2'))
    dispose()
    session.append('user/message', user('u3'))
    expect(seen).toEqual(['fiber 0', 'disposer 0', 'disposer 1'])
  })

  test('appending from a listener throws REENTRANT_APPEND; the log keeps the first event', async () => {
    const app = await mountSessions()
    const errors: unknown[] = []
    app.sessions.onEvent((session, event) => {
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
    expect(types(session.events)).toEqual(['user/message'])
  })
})
