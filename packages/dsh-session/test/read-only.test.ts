/** Issue 12 item 9: nothing a caller gets from a session can change the log or the next request. */
import { SessionId } from 'dsh-llm'
import { JsonlStorage, type SessionEvent } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { tempDir } from './fixtures/events.ts'
import { assistant, mountSessions, user } from './support.ts'

describe('9. read-only views', () => {
  it('refuses every in-place change of session.events with READ_ONLY and keeps the log and the derived history', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create({ id: SessionId('s1') })
    session.append('user/message', user('u1'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', {
      turn: 1,
      step: 1,
      message: assistant('a1', [{ type: 'text', text: 'hi' }]),
    })
    const before = session.deriveMessages()
    const events = session.events as SessionEvent[]
    const first = events[0] as SessionEvent
    const attempts: Array<[string, () => unknown]> = [
      ['push', () => events.push(first)],
      ['pop', () => events.pop()],
      ['shift', () => events.shift()],
      ['unshift', () => events.unshift(first)],
      ['splice', () => events.splice(0, 1)],
      ['sort', () => events.sort()],
      ['reverse', () => events.reverse()],
      ['fill', () => events.fill(first)],
      ['copyWithin', () => events.copyWithin(0, 1)],
    ]
    for (const [method, attempt] of attempts) {
      expect(attempt).toThrow(
        `session events are read-only: ${method}() cannot change the log; copy it first (events.slice())`,
      )
    }
    // Events, messages, the header state and the open turn are frozen all the way down.
    expect(() => {
      ;(first.data as { id: string }).id = 'changed'
    }).toThrow(TypeError)
    const messages = session.deriveMessages() as unknown[]
    expect(() => messages.push(user('x'))).toThrow(TypeError)
    expect(Object.isFrozen(messages[0])).toBe(true)
    expect(Object.isFrozen(session.openTurn())).toBe(true)
    // A copy is an ordinary array the caller may change freely.
    const copy = session.events.slice()
    copy.reverse()
    expect(copy[0]?.seq).toBe(3)
    expect(session.events.map((event) => event.seq)).toEqual([0, 1, 2, 3])
    expect(session.seq).toBe(4)
    expect(session.deriveMessages()).toBe(before)
    session.append('step/end', { turn: 1, step: 1 })
    expect(session.events.map((event) => event.type)).toEqual([
      'user/message',
      'turn/start',
      'step/start',
      'assistant/message',
      'step/end',
    ])
  })

  it('gives frozen events, header and load report from storage and from an opened session', async () => {
    const { dir, dispose } = tempDir()
    try {
      const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
      const session = await app.sessions.create({ id: SessionId('s1') })
      session.append('user/message', user('u1'))
      await app.sessions.close(session)
      const loaded = await new JsonlStorage({ dir }).load(SessionId('s1'))
      expect(Object.isFrozen(loaded.events[0])).toBe(true)
      expect(Object.isFrozen(loaded.events[0]?.data)).toBe(true)
      const reopened = await app.sessions.open(SessionId('s1'))
      expect(Object.isFrozen(reopened.loadReport)).toBe(true)
      expect(() => (reopened.events as SessionEvent[]).push(loaded.events[0] as SessionEvent)).toThrow(
        'session events are read-only',
      )
    } finally {
      dispose()
    }
  })
})
