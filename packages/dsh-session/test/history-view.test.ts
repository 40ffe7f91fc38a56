import { composeRequest, type RequestHeader, type Session } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { mountSessions, user } from './support.ts'

async function fresh(): Promise<Session> {
  const app = await mountSessions()
  return app.sessions.create()
}

const ids = (list: readonly { readonly id: string }[]) => list.map((m) => m.id)

describe('deriveHistory', () => {
  test('a view is the history at the time it was taken; later appends do not change it', async () => {
    const session = await fresh()
    session.append('user/message', user('u1'))
    const first = session.deriveHistory()
    expect(session.deriveHistory()).toBe(first)
    session.append('user/message', user('u2'))
    const second = session.deriveHistory()
    expect(second).not.toBe(first)
    expect(first.length).toBe(1)
    expect(second.length).toBe(2)
    expect(ids(first.toArray())).toEqual(['u1'])
    expect(ids(second.toArray())).toEqual(['u1', 'u2'])
    expect(second.toArray()).toBe(session.deriveMessages())
    expect(Object.isFrozen(first.toArray())).toBe(true)
    expect(first.toArray()).toBe(first.toArray())
  })

  test('a replace after a view was taken leaves the view as it was (the fold copies before it changes nodes)', async () => {
    const session = await fresh()
    session.append('user/message', user('u1'))
    session.append('user/message', user('u2'))
    session.append('user/message', user('u3'))
    const before = session.deriveHistory()
    session.append('user/message', user('summary'), {
      op: 'replace',
      start: 0,
      end: 2,
      sourceEventSeqs: [0, 1],
    })
    const after = session.deriveHistory()
    expect(ids(before.toArray())).toEqual(['u1', 'u2', 'u3'])
    expect(ids(after.toArray())).toEqual(['summary', 'u3'])
    session.append('user/message', user('again'), { op: 'replace', start: 0, end: 1, sourceEventSeqs: [3] })
    expect(ids(after.toArray())).toEqual(['summary', 'u3'])
    expect(ids(session.deriveMessages())).toEqual(['again', 'u3'])
  })

  test('composeRequest over a view equals composeRequest over the array, frozen, one messages array', async () => {
    const session = await fresh()
    session.append('user/message', user('u1'))
    session.append('user/message', user('u2'))
    const header: RequestHeader = {
      config: { provider: 'p', model: 'm' },
      system: 'sys',
      messagePrefix: [user('prefix')],
    }
    const fromView = composeRequest(header, session.deriveHistory(), { sessionId: session.id })
    session.append('user/message', user('u3'))
    const fromArray = composeRequest(header, session.deriveMessages().slice(0, 2), { sessionId: session.id })
    expect(Object.isFrozen(fromView)).toBe(true)
    expect(fromView).toEqual(fromArray)
    expect(ids(fromView.messages)).toEqual(['prefix', 'u1', 'u2'])
    expect(fromView.messages).toBe(fromView.messages)
    expect(Object.isFrozen(fromView.messages)).toBe(true)
    expect(JSON.parse(JSON.stringify(fromView))).toEqual(JSON.parse(JSON.stringify(fromArray)))
  })

  test('composeRequest: members in their documented order, only when present, messages an enumerable getter', async () => {
    const session = await fresh()
    session.append('user/message', user('u1'))
    const signal = new AbortController().signal
    const full: RequestHeader = {
      config: {
        provider: 'p',
        model: 'm',
        temperature: 0.5,
        maxTokens: 9,
        reasoningEffort: 'low',
        stop: ['x'],
      },
      system: 'sys',
      tools: [{ name: 't', description: 'd', parameters: { type: 'object' } }],
    }
    const request = composeRequest(full, session.deriveHistory(), { sessionId: session.id, signal })
    expect(Object.keys(request)).toEqual([
      'provider',
      'model',
      'temperature',
      'maxTokens',
      'reasoningEffort',
      'stop',
      'system',
      'messages',
      'tools',
      'sessionId',
      'signal',
    ])
    const descriptor = Object.getOwnPropertyDescriptor(request, 'messages')
    expect(descriptor?.get).toBeTypeOf('function')
    expect(descriptor?.enumerable).toBe(true)
    expect(descriptor?.configurable).toBe(false)
    expect(request.signal).toBe(signal)
    expect(Object.isFrozen(request.stop) && Object.isFrozen(request.tools)).toBe(true)
    // One getter for every request: a getter made per request turns each into a slow dictionary object.
    const again = composeRequest(full, session.deriveHistory(), { sessionId: session.id, signal })
    expect(Object.getOwnPropertyDescriptor(again, 'messages')?.get).toBe(descriptor?.get)
    expect({ ...again }.messages).toBe(again.messages)
    const bare = composeRequest({ config: { provider: 'p', model: 'm' }, system: '', tools: [] }, [])
    expect(Object.keys(bare)).toEqual(['provider', 'model', 'messages'])
    expect(Object.isFrozen(bare)).toBe(true)
  })
})
