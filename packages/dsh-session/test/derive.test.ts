import { foldMessages, type Session, surfaceProjectionCount } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { assistant, callBlock, mountSessions, refusal, toolResult, user } from './support.ts'

async function fresh(): Promise<Session> {
  const app = await mountSessions()
  return app.sessions.create()
}

/** Appends one tool step (6 events, 3 surface messages) of turn 1. */
function toolStep(session: Session, step: number): void {
  const id = `c${step}`
  session.append('step/start', { turn: 1, step })
  session.append('assistant/chunk', { turn: 1, step, chunk: { type: 'text-delta', index: 0, text: 'x' } })
  session.append('assistant/message', { turn: 1, step, message: assistant(`a${step}`, [callBlock(id)]) })
  session.append('tool/call', { turn: 1, step, callId: callBlock(id).id, name: 'read', arguments: '{}' })
  session.append('tool/result', { turn: 1, step, message: toolResult(`r${step}`, id) })
  session.append('step/end', { turn: 1, step })
}

describe('deriveMessages', () => {
  test('folds user messages, non-empty assistant messages and tool results, in log order', async () => {
    const session = await fresh()
    session.append('user/message', user('u1'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', { turn: 1, step: 1, message: assistant('empty', []) })
    session.append('assistant/message', { turn: 1, step: 1, message: assistant('a1', [callBlock('c1')]) })
    session.append('tool/result', { turn: 1, step: 1, message: toolResult('r1', 'c1') })
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['u1', 'a1', 'r1'])
  })

  test('returns a frozen array of the logged (frozen) messages, reused while nothing changed', async () => {
    const session = await fresh()
    const first = session.append('user/message', user('u1'))
    const derived = session.deriveMessages()
    expect(Object.isFrozen(derived)).toBe(true)
    expect(derived[0]).toBe(first.data)
    expect(session.deriveMessages()).toBe(derived)
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    expect(session.deriveMessages()).toBe(derived)
    session.append('user/message', user('u2'))
    const next = session.deriveMessages()
    expect(next).not.toBe(derived)
    expect(next.map((message) => message.id)).toEqual(['u1', 'u2'])
    expect(derived.map((message) => message.id)).toEqual(['u1'])
  })

  test('a call at step 1,000 projects as many events as a call at step 10: each event is projected once', async () => {
    const session = await fresh()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    const costs: number[] = []
    for (let step = 1; step <= 1000; step++) {
      toolStep(session, step)
      const before = surfaceProjectionCount(session)
      session.deriveMessages()
      costs.push(surfaceProjectionCount(session) - before)
    }
    // The first call also projects turn/start; every later call projects exactly its step's 5 events
    // (its chunk entry, kept in a run, is skipped unbuilt).
    expect(costs[0]).toBe(6)
    expect(costs[9]).toBe(5)
    expect(costs[999]).toBe(5)
    expect(new Set(costs.slice(1))).toEqual(new Set([5]))
    // Every event once, the 1,000 chunk entries (one per step) excepted.
    expect(surfaceProjectionCount(session)).toBe(session.seq - 1000)
    const again = surfaceProjectionCount(session)
    session.deriveMessages()
    expect(surfaceProjectionCount(session)).toBe(again)
    expect(session.deriveMessages()).toEqual(foldMessages(session.events))
    expect(session.deriveMessages()).toHaveLength(2000)
  })
})

describe('surface replace', () => {
  async function threeMessages(): Promise<Session> {
    const session = await fresh()
    session.append('user/message', user('u1'))
    session.append('user/message', user('u2'))
    session.append('user/message', user('u3'))
    return session
  }

  test('a replace covering its shadowed nodes swaps them for the event message, live and from scratch', async () => {
    const session = await threeMessages()
    expect(session.deriveMessages()).toHaveLength(3)
    const event = session.append('user/message', user('summary'), {
      op: 'replace',
      start: 0,
      end: 2,
      sourceEventSeqs: [0, 1],
    })
    expect(event.surface).toEqual({ op: 'replace', start: 0, end: 2, sourceEventSeqs: [0, 1] })
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['summary', 'u3'])
    expect(foldMessages(session.events).map((message) => message.id)).toEqual(['summary', 'u3'])
    session.append('user/message', user('again'), { op: 'replace', start: 0, end: 1, sourceEventSeqs: [3] })
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['again', 'u3'])
  })

  test.each([
    [
      'a range beyond the surface',
      { op: 'replace', start: 1, end: 4, sourceEventSeqs: [1, 2] },
      'user/message at seq 3 replaces [1, 4) outside the surface of 3 messages',
    ],
    [
      'an inverted range',
      { op: 'replace', start: 2, end: 1, sourceEventSeqs: [] },
      'user/message at seq 3 replaces [2, 1) outside the surface of 3 messages',
    ],
    [
      'a shadowed node its sources do not list',
      { op: 'replace', start: 0, end: 3, sourceEventSeqs: [0, 2] },
      'user/message at seq 3 shadows surface node 1 (seq 1) but sourceEventSeqs does not list it',
    ],
    [
      'a source seq that is not an earlier event',
      { op: 'replace', start: 0, end: 1, sourceEventSeqs: [0, 3] },
      'user/message at seq 3 lists source seq 3, which is not an earlier event',
    ],
  ])('refuses %s with INVALID_SURFACE; the log is unchanged', async (_name, surface, message) => {
    const session = await threeMessages()
    expect(refusal(() => session.append('user/message', user('s'), surface as never))).toEqual({
      code: 'INVALID_SURFACE',
      message,
    })
    expect(session.seq).toBe(3)
    expect(session.deriveMessages()).toHaveLength(3)
  })

  test('surface metadata on an event that adds nothing to the surface is refused', async () => {
    const session = await fresh()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    expect(() =>
      session.append(
        'assistant/message',
        { turn: 1, step: 1, message: assistant('a', []) },
        { op: 'append' },
      ),
    ).toThrow('assistant/message at seq 2 carries surface metadata but contributes no message to the surface')
    expect(() => session.append('step/end', { turn: 1, step: 1 }, { op: 'append' })).toThrow(
      'step/end at seq 2 carries surface metadata but contributes no message to the surface',
    )
    expect(session.seq).toBe(2)
  })

  test('malformed surface metadata is an INVALID_EVENT naming the surface path', async () => {
    const session = await threeMessages()
    expect(() =>
      session.append('user/message', user('s'), { op: 'replace', start: -1, end: 1, sourceEventSeqs: [0] }),
    ).toThrow('invalid user/message event at seq 3: surface.start: Too small: expected number to be >=0')
  })
})
