import { defineSessionEvent, type Session, SessionError } from 'dsh-session'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { assistant, callBlock, mountSessions, toolResult, types, user } from './support.ts'

declare module 'dsh-session' {
  interface SessionEventMap {
    'test/note': { readonly text: string }
    'test/probe': { readonly n: number }
  }
}

const disposers: Array<() => void> = []
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose()
})

async function fresh(): Promise<Session> {
  const app = await mountSessions()
  return app.sessions.create()
}

function enclosureError(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    if (error instanceof SessionError && error.code === 'ENCLOSURE') return error.message
    throw error
  }
  throw new Error('expected an ENCLOSURE error')
}

const start = (turn: number) => ({ turn, trigger: { kind: 'queued' as const } })
const end = (turn: number) => ({ turn, reason: { kind: 'completed' as const } })

describe('between turns', () => {
  test('user/message, agent/inbox/spliced, session/end-seed and anywhere plugin events may stand between turns', async () => {
    disposers.push(defineSessionEvent('test/note', { schema: z.object({ text: z.string() }) }))
    const session = await fresh()
    session.append('user/message', user('u1'))
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [user('u2')] })
    session.append('test/note', { text: 'hello' })
    session.append('session/end-seed', {})
    expect(types(session.events)).toEqual([
      'user/message',
      'agent/inbox/spliced',
      'test/note',
      'session/end-seed',
    ])
    expect(session.openTurn()).toBeUndefined()
  })

  test.each([
    ['turn/end', end(1), 'turn/end at seq 0 needs an open turn; the log is between turns'],
    ['step/start', { turn: 1, step: 1 }, 'step/start at seq 0 needs an open turn; the log is between turns'],
    ['step/end', { turn: 1, step: 1 }, 'step/end at seq 0 needs an open turn; the log is between turns'],
    [
      'request/header',
      { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' },
      'request/header at seq 0 needs an open turn; the log is between turns',
    ],
    [
      'tool/call',
      { turn: 1, step: 1, callId: 'c1', name: 'read', arguments: '{}' },
      'tool/call at seq 0 needs an open turn; the log is between turns',
    ],
    [
      'assistant/chunk',
      { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } },
      'assistant/chunk at seq 0 needs an open turn; the log is between turns',
    ],
  ])('%s is refused between turns', async (type, data, message) => {
    const session = await fresh()
    expect(enclosureError(() => session.append(type as never, data as never))).toBe(message)
    expect(session.seq).toBe(0)
  })

  test('a plugin event defined with enclosure turn needs an open turn', async () => {
    disposers.push(
      defineSessionEvent('test/probe', { schema: z.object({ n: z.number() }), enclosure: 'turn' }),
    )
    const session = await fresh()
    expect(enclosureError(() => session.append('test/probe', { n: 1 }))).toBe(
      'test/probe at seq 0 needs an open turn; the log is between turns',
    )
    session.append('turn/start', start(1))
    session.append('test/probe', { n: 1 })
    expect(types(session.events)).toEqual(['turn/start', 'test/probe'])
  })
})

describe('turns and steps', () => {
  test('a full turn with two steps and tool calls is accepted, and the folds follow it', async () => {
    const session = await fresh()
    session.append('turn/start', start(1))
    expect(session.openTurn()).toEqual({ turn: 1, lastStep: 0 })
    session.append('step/start', { turn: 1, step: 1 })
    expect(session.openTurn()).toEqual({ turn: 1, step: 1, lastStep: 1 })
    session.append('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' })
    session.append('assistant/message', { turn: 1, step: 1, message: assistant('a1', [callBlock('c1')]) })
    session.append('tool/call', {
      turn: 1,
      step: 1,
      callId: callBlock('c1').id,
      name: 'read',
      arguments: '{}',
    })
    session.append('tool/result', { turn: 1, step: 1, message: toolResult('r1', 'c1') })
    session.append('step/end', { turn: 1, step: 1 })
    session.append('user/message', user('steer'))
    session.append('step/start', { turn: 1, step: 2 })
    session.append('step/end', { turn: 1, step: 2 })
    session.append('turn/end', end(1))
    expect(session.openTurn()).toBeUndefined()
    expect(session.lastTurn()).toBe(1)
    session.append('turn/start', start(2))
    expect(session.openTurn()).toEqual({ turn: 2, lastStep: 0 })
  })

  test('turn/start is refused while a turn is open and must be numbered lastTurn + 1', async () => {
    const session = await fresh()
    expect(enclosureError(() => session.append('turn/start', start(2)))).toBe(
      'turn/start at seq 0 numbers turn 2; expected 1',
    )
    session.append('turn/start', start(1))
    expect(enclosureError(() => session.append('turn/start', start(2)))).toBe(
      'turn/start at seq 1 comes while turn 1 is still open',
    )
    session.append('turn/end', end(1))
    expect(enclosureError(() => session.append('turn/start', start(1)))).toBe(
      'turn/start at seq 2 numbers turn 1; expected 2',
    )
  })

  test('step numbering is contiguous from 1 and a step cannot open inside a step', async () => {
    const session = await fresh()
    session.append('turn/start', start(1))
    expect(enclosureError(() => session.append('step/start', { turn: 1, step: 2 }))).toBe(
      'step/start at seq 1 numbers step 2; expected 1',
    )
    session.append('step/start', { turn: 1, step: 1 })
    expect(enclosureError(() => session.append('step/start', { turn: 1, step: 2 }))).toBe(
      'step/start at seq 2 comes while step 1 of turn 1 is still open',
    )
    session.append('step/end', { turn: 1, step: 1 })
    expect(enclosureError(() => session.append('step/start', { turn: 1, step: 3 }))).toBe(
      'step/start at seq 3 numbers step 3; expected 2',
    )
    expect(enclosureError(() => session.append('step/start', { turn: 2, step: 2 }))).toBe(
      'step/start at seq 3 names turn 2 but turn 1 is open',
    )
  })

  test('step/end and turn/end must match the open step and turn; turn/end with an open step is refused', async () => {
    const session = await fresh()
    session.append('turn/start', start(1))
    expect(enclosureError(() => session.append('step/end', { turn: 1, step: 1 }))).toBe(
      'step/end at seq 1 needs an open step; turn 1 has none open',
    )
    session.append('step/start', { turn: 1, step: 1 })
    expect(enclosureError(() => session.append('step/end', { turn: 1, step: 2 }))).toBe(
      'step/end at seq 2 names step 2 but step 1 is open',
    )
    expect(enclosureError(() => session.append('turn/end', end(1)))).toBe(
      'turn/end at seq 2 comes while step 1 of turn 1 is still open',
    )
    session.append('step/end', { turn: 1, step: 1 })
    expect(enclosureError(() => session.append('turn/end', end(3)))).toBe(
      'turn/end at seq 3 names turn 3 but turn 1 is open',
    )
    session.append('turn/end', end(1))
    expect(types(session.events)).toEqual(['turn/start', 'step/start', 'step/end', 'turn/end'])
  })

  test('assistant and tool events need the open step and must name it', async () => {
    const session = await fresh()
    session.append('turn/start', start(1))
    const message = assistant('a1', [{ type: 'text', text: 'hi' }])
    expect(enclosureError(() => session.append('assistant/message', { turn: 1, step: 1, message }))).toBe(
      'assistant/message at seq 1 needs an open step; turn 1 has none open',
    )
    // A chunk takes the session's fast path (copied and checked by hand): the same rules and errors.
    const chunk = (turn: number, step: number) => ({
      turn,
      step,
      chunk: { type: 'text-delta' as const, index: 0, text: 'x' },
    })
    expect(enclosureError(() => session.append('assistant/chunk', chunk(1, 1)))).toBe(
      'assistant/chunk at seq 1 needs an open step; turn 1 has none open',
    )
    session.append('step/start', { turn: 1, step: 1 })
    expect(enclosureError(() => session.append('assistant/chunk', chunk(1, 2)))).toBe(
      'assistant/chunk at seq 2 names step 2 but step 1 is open',
    )
    expect(enclosureError(() => session.append('assistant/chunk', chunk(2, 1)))).toBe(
      'assistant/chunk at seq 2 names turn 2 but turn 1 is open',
    )
    expect(
      enclosureError(() =>
        session.append('tool/result', { turn: 1, step: 2, message: toolResult('r', 'c') }),
      ),
    ).toBe('tool/result at seq 2 names step 2 but step 1 is open')
    session.append('assistant/message', { turn: 1, step: 1, message })
    expect(session.seq).toBe(3)
  })
})
