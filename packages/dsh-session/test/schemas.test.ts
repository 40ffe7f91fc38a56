import { defineSessionEvent, sessionEventDefinition, validateEvent } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { mountSessions, refusal, user } from './support.ts'

declare module 'dsh-session' {
  interface SessionEventMap {
    'schema-test/ping': { readonly n: number }
  }
}

const userEvent = { type: 'user/message', seq: 4, time: 1, data: user('u1') }

describe('validateEvent', () => {
  test('returns a valid event deep-frozen (the same object)', () => {
    const value = structuredClone(userEvent)
    const event = validateEvent(value)
    expect(event).toBe(value)
    expect(Object.isFrozen(event)).toBe(true)
    expect(Object.isFrozen(value.data.content[0])).toBe(true)
  })

  test('an unknown type has its own error naming the type and seq', () => {
    expect(refusal(() => validateEvent({ type: 'mystery/event', seq: 9, time: 1, data: {} }))).toEqual({
      code: 'UNKNOWN_EVENT_TYPE',
      message: 'unknown event type mystery/event at seq 9',
    })
  })

  test.each([
    [
      { ...userEvent, data: { ...user('u1'), content: [{ type: 'text', text: 'a' }, { type: 'text' }] } },
      'invalid user/message event at seq 4: data.content[1].text: Invalid input: expected string, received undefined',
    ],
    [
      { ...userEvent, seq: -1 },
      'invalid user/message event at seq -1: seq: Too small: expected number to be >=0',
    ],
    [{ type: 'user/message', seq: 4, time: 1 }, 'invalid user/message event at seq 4: data: missing'],
    [
      { type: 'turn/end', seq: 2, time: 1, data: { turn: 1, reason: { kind: 'error' } } },
      'invalid turn/end event at seq 2: data.reason.failure: Invalid input: expected object, received undefined',
    ],
    [
      { ...userEvent, surface: { op: 'replace', start: 0, end: 1 } },
      'invalid user/message event at seq 4: surface.sourceEventSeqs: Invalid input: expected array, received undefined',
    ],
    ['not an event', 'invalid event: expected an object'],
  ])('refuses %j with INVALID_EVENT naming type, seq and path', (value, message) => {
    expect(refusal(() => validateEvent(value))).toEqual({ code: 'INVALID_EVENT', message })
  })

  test('unknown kinds of open vocabularies load unchanged', () => {
    const event = validateEvent({
      type: 'turn/end',
      seq: 3,
      time: 1,
      data: { turn: 1, reason: { kind: 'plugin-stop', detail: 'x' } },
    })
    expect(event.data).toEqual({ turn: 1, reason: { kind: 'plugin-stop', detail: 'x' } })
  })
})

describe('defineSessionEvent', () => {
  test('registers a plugin type (default enclosure anywhere); the disposer removes it; duplicates are refused', async () => {
    const dispose = defineSessionEvent('schema-test/ping', { schema: z.object({ n: z.number() }) })
    expect(sessionEventDefinition('schema-test/ping')?.enclosure).toBe('anywhere')
    expect(refusal(() => defineSessionEvent('schema-test/ping', { schema: z.object({}) }))).toEqual({
      code: 'DUPLICATE_EVENT_TYPE',
      message: 'event type schema-test/ping is already defined',
    })
    expect(refusal(() => defineSessionEvent('user/message', { schema: z.object({}) })).code).toBe(
      'DUPLICATE_EVENT_TYPE',
    )
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('schema-test/ping', { n: 1 })
    expect(refusal(() => session.append('schema-test/ping', { n: 'x' } as never))).toEqual({
      code: 'INVALID_EVENT',
      message:
        'invalid schema-test/ping event at seq 1: data.n: Invalid input: expected number, received string',
    })
    dispose()
    expect(sessionEventDefinition('schema-test/ping')).toBeUndefined()
    expect(refusal(() => session.append('schema-test/ping', { n: 2 })).code).toBe('UNKNOWN_EVENT_TYPE')
    expect(sessionEventDefinition('user/message')?.enclosure).toBe('anywhere')
    expect(sessionEventDefinition('tool/call')?.enclosure).toBe('turn')
  })
})
