/**
 * Issue 30 item 2: `session.events` is a plain frozen array, so an app can post a log to a worker or
 * snapshot it with `structuredClone`, the folded chunk events of a committed step included.
 */
import { describe, expect, it } from 'vitest'
import { assistant, mountSessions, user } from './support.ts'

async function sessionWithFoldedStep() {
  const app = await mountSessions()
  const session = await app.sessions.create()
  session.append('user/message', user('u1', 'hello'))
  session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
  session.append('step/start', { turn: 1, step: 1 })
  session.append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'block-start', index: 0, blockType: 'text' },
  })
  session.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hi' } })
  session.append('assistant/message', {
    turn: 1,
    step: 1,
    message: assistant('a1', [{ type: 'text', text: 'hi' }]),
  })
  return session
}

describe('session.events is a plain frozen array', () => {
  it('survives structuredClone with every event, folded chunks included', async () => {
    const session = await sessionWithFoldedStep()
    const events = session.events
    expect(Array.isArray(events)).toBe(true)
    expect(Object.isFrozen(events)).toBe(true)
    const clone = structuredClone(events)
    expect(clone).toEqual(JSON.parse(JSON.stringify(events)))
    expect(clone.map((event) => `${event.seq}:${event.type}`)).toEqual([
      '0:user/message',
      '1:turn/start',
      '2:step/start',
      '3:assistant/chunk',
      '4:assistant/chunk',
      '5:assistant/message',
    ])
    expect(clone[4]).toEqual({
      type: 'assistant/chunk',
      seq: 4,
      time: 1005,
      data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hi' } },
    })
  })

  it('is a snapshot: an array read before an append keeps its length, a read after sees the new event', async () => {
    const session = await sessionWithFoldedStep()
    const before = session.events
    expect(session.events).toBe(before)
    session.append('step/end', { turn: 1, step: 1 })
    expect(before.length).toBe(6)
    const after = session.events
    expect(after.length).toBe(7)
    expect(after[6]?.type).toBe('step/end')
    expect(after.slice(0, 6)).toEqual(before)
    expect(session.eventAt(4)).toEqual(before[4])
    expect(session.eventAt(7)).toBeUndefined()
  })
})
