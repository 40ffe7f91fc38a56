import { createUserMessage, MessageId } from 'dsh-llm'
import { MemoryStorage, registerRepairCloser, repairClosers, type SessionEvent } from 'dsh-session'
import { afterEach, describe, expect, test } from 'vitest'
import { mountSessions, types, user } from './support.ts'

const disposers: (() => void)[] = []
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose()
})

/** A closer that answers every unmatched `user/message` with id `open-*` by replacing it in place. */
function closeOpenMarkers(events: readonly SessionEvent[]) {
  const out = []
  let index = 0
  for (const event of events) {
    if (event.type !== 'user/message') continue
    if (event.data.id.startsWith('open-')) {
      const message = createUserMessage({
        id: MessageId(`closed-${event.data.id}`),
        content: [{ type: 'text', text: 'closed' }],
        source: { kind: 'user' },
      })
      out.push({
        type: 'user/message' as const,
        data: message,
        surface: { op: 'replace' as const, start: index, end: index + 1, sourceEventSeqs: [event.seq] },
      })
    }
    index++
  }
  return out
}

describe('package repair closers', () => {
  test('repairClosers puts registered closers (with their surface metadata) before the turn closers', async () => {
    disposers.push(registerRepairCloser('test/markers', closeOpenMarkers))
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('user/message', user('open-1'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    const closers = repairClosers(session.events)
    expect(closers.map((closer) => closer.type)).toEqual(['user/message', 'turn/end'])
    expect(closers[0]?.surface).toEqual({ op: 'replace', start: 0, end: 1, sourceEventSeqs: [0] })
  })

  test('opening a stored session commits package closers through the normal append path', async () => {
    disposers.push(registerRepairCloser('test/markers', closeOpenMarkers))
    const storage = new MemoryStorage()
    const first = await mountSessions({ storage })
    const session = await first.sessions.create()
    session.append('user/message', user('open-1'))
    session.append('user/message', user('u2'))
    await first.sessions.close(session)
    const second = await mountSessions({ storage })
    const reopened = await second.sessions.open(session.id)
    expect(types(reopened.events)).toEqual(['user/message', 'user/message', 'user/message'])
    expect(reopened.deriveMessages().map((message) => message.id)).toEqual(['closed-open-1', 'u2'])
    expect(reopened.loadReport?.repairedEvents).toBe(1)
  })

  test('a fork commits package closers after its seed marker', async () => {
    disposers.push(registerRepairCloser('test/markers', closeOpenMarkers))
    const app = await mountSessions()
    const source = await app.sessions.create()
    source.append('user/message', user('u1'))
    source.append('user/message', user('open-2'))
    const child = await app.sessions.fork(source, 2)
    expect(types(child.events)).toEqual(['user/message', 'user/message', 'session/end-seed', 'user/message'])
    expect(child.deriveMessages().map((message) => message.id)).toEqual(['u1', 'closed-open-2'])
  })

  test('a key can be registered once; its disposer removes it', () => {
    const dispose = registerRepairCloser('test/markers', closeOpenMarkers)
    expect(() => registerRepairCloser('test/markers', closeOpenMarkers)).toThrow(
      'repair closer test/markers is already registered',
    )
    dispose()
    disposers.push(registerRepairCloser('test/markers', closeOpenMarkers))
  })
})
