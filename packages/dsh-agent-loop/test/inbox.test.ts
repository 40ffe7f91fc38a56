import { Context } from 'cordis'
import AgentLoop, { ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime, MessageId, SessionId, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse } from 'dsh-llm/testing'
import { emptyInbox, MemoryStorage, type SessionEvent, Sessions } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { createHarness, dataOf, types } from './harness.ts'

const msg = (id: string) => userText(id.toUpperCase(), { kind: 'user' })
const withId = (id: string) => ({ ...msg(id), id: MessageId(id) })

describe('Inbox mutations', () => {
  it('records each mutation as one spliced event, then notifies', async () => {
    const h = await createHarness()
    const agent = await h.create()
    const [a, b, c, d] = [withId('a'), withId('b'), withId('c'), withId('d')]
    agent.inbox.append('next-turn', a, b)
    agent.inbox.prepend('next-step', c)
    agent.inbox.replace(MessageId('b'), d)
    expect(agent.inbox.remove(MessageId('a'))).toEqual(a)
    expect(agent.inbox.splice('next-turn', 1, 0, b)).toEqual([])
    expect(agent.inbox.find(MessageId('b'))).toEqual({ target: 'next-turn', index: 1, message: b })
    expect(agent.inbox.snapshot()).toEqual({ nextTurn: [d, b], nextStep: [c] })
    agent.inbox.clear()
    expect(agent.inbox.snapshot()).toEqual({ nextTurn: [], nextStep: [] })
    expect(dataOf(agent.session, 'agent/inbox/spliced')).toEqual([
      { target: 'next-turn', start: 0, inserted: [a, b] },
      { target: 'next-step', start: 0, inserted: [c] },
      { target: 'next-turn', start: 1, removedCount: 1, inserted: [d], outcome: 'canceled' },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' },
      { target: 'next-turn', start: 1, inserted: [b] },
      { target: 'next-turn', start: 0, removedCount: 2, inserted: [], outcome: 'canceled' },
      { target: 'next-step', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' },
    ])
    expect(h.notes.slice(1)).toEqual([
      'inserted:A',
      'inserted:B',
      'inserted:C',
      'discarded:B',
      'inserted:D',
      'discarded:A',
      'inserted:B',
      'discarded:D',
      'discarded:B',
      'discarded:C',
    ])
    expect(agent.status).toBe('idle')
  })

  it('validates every mutation; a refused one writes nothing', async () => {
    const h = await createHarness()
    const agent = await h.create()
    agent.inbox.append('next-turn', withId('a'))
    agent.inbox.append('next-step', withId('s'))
    const seq = agent.session.seq
    const refused = (run: () => unknown, message: string) =>
      expect(run).toThrow(expect.objectContaining({ code: 'INVALID_INBOX_MUTATION', message }))
    refused(
      () => agent.inbox.splice('next-turn', 2, 0, withId('x')),
      'Inbox.splice(next-turn, 2, 0): start is outside the next-turn list of 1 messages',
    )
    refused(
      () => agent.inbox.splice('next-step', 0, 2),
      'Inbox.splice(next-step, 0, 2): deleteCount runs past the next-step list of 1 messages',
    )
    refused(
      () => agent.inbox.splice('next-turn', -1, 0),
      'Inbox.splice(next-turn, -1, 0): start is outside the next-turn list of 1 messages',
    )
    refused(
      () => agent.inbox.append('next-turn', withId('s')),
      'Inbox.splice(next-turn, 1, 0): message s is already pending in the inbox',
    )
    refused(
      () => agent.inbox.prepend('next-step', withId('n'), withId('n')),
      'Inbox.splice(next-step, 0, 0): message n is inserted twice',
    )
    refused(
      () => agent.inbox.replace(MessageId('zz'), withId('q')),
      'Inbox.replace: message zz is not pending',
    )
    refused(() => agent.inbox.remove(MessageId('zz')), 'Inbox.remove: message zz is not pending')
    refused(
      () => agent.inbox.append('later' as never, withId('q')),
      `Inbox.append: target must be 'next-turn' or 'next-step', got "later"`,
    )
    refused(
      () => agent.send(withId('a')),
      'Inbox.splice(next-turn, 1, 0): message a is already pending in the inbox',
    )
    expect(agent.session.seq).toBe(seq)
    expect(agent.status).toBe('idle')
    agent.inbox.replace(MessageId('a'), withId('a'))
    expect(agent.session.seq).toBe(seq + 1)
  })

  it('the inbox is readable cold: with no agent, and after the agent is gone', async () => {
    const h = await createHarness([textResponse('ok')])
    const session = await h.app.sessions.create()
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [withId('x')] })
    expect(h.app.agentLoop.inbox(session)).toEqual({ nextTurn: [withId('x')], nextStep: [] })
    const agent = await h.create({ session })
    expect(agent.inbox.nextTurn).toEqual([withId('x')])
    agent.send(withId('y'), { wakeup: false })
    await agent.dispose()
    expect(h.app.agentLoop.inbox(session)).toEqual({ nextTurn: [withId('x'), withId('y')], nextStep: [] })
  })

  it('the inbox projection and the agents live as long as AgentLoop', async () => {
    const app = new Context()
    await app.plugin(LlmRuntime)
    await app.plugin(Sessions)
    await app.plugin(ToolRegistry)
    const fiber = app.plugin(AgentLoop)
    await fiber
    const session = await app.sessions.create()
    expect(app.sessionProjections.get(session, 'inbox')).toEqual({ nextTurn: [], nextStep: [] })
    app.llm.registerAdapter('none', scriptedAdapter([]))
    const agent = await app.agentLoop.create({ session, provider: 'none', model: 'm' })
    let disposed = false
    app.on('agent/disposed', () => {
      disposed = true
    })
    await fiber.dispose()
    expect([disposed, agent.disposed]).toEqual([true, true])
    expect(() => app.sessionProjections.get(session, 'inbox')).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_PROJECTION' }),
    )
  })

  it('replaying a persisted splice with bad coordinates is an error naming its seq', async () => {
    const storage = new MemoryStorage()
    const id = SessionId('bad-splice')
    await storage.create({ format: 'dsh-session', version: 1, sessionId: id, createdAt: 0 })
    const events: SessionEvent[] = [
      {
        type: 'agent/inbox/spliced',
        seq: 0,
        time: 0,
        data: { target: 'next-turn', start: 0, inserted: [withId('a')] },
      },
      { type: 'agent/inbox/spliced', seq: 1, time: 0, data: { target: 'next-step', start: 3, inserted: [] } },
    ]
    await storage.appendBatch(id, events, 0)
    await storage.release(id)
    const h = await createHarness([], { storage })
    const session = await h.app.sessions.open(id)
    expect(() => h.app.agentLoop.inbox(session)).toThrow(
      expect.objectContaining({
        code: 'INVALID_SPLICE',
        message: 'agent/inbox/spliced at seq 1: start 3 is outside the next-step list of 0 messages',
      }),
    )
  })

  it('replaying a persisted splice that duplicates a pending id is an error naming its seq', async () => {
    const storage = new MemoryStorage()
    const id = SessionId('dup-splice')
    await storage.create({ format: 'dsh-session', version: 1, sessionId: id, createdAt: 0 })
    await storage.appendBatch(
      id,
      [
        {
          type: 'agent/inbox/spliced',
          seq: 0,
          time: 0,
          data: { target: 'next-turn', start: 0, inserted: [withId('a')] },
        },
        { type: 'user/message', seq: 1, time: 0, data: msg('context') },
        {
          type: 'agent/inbox/spliced',
          seq: 2,
          time: 0,
          data: { target: 'next-step', start: 0, inserted: [withId('a')] },
        },
      ],
      0,
    )
    await storage.release(id)
    const h = await createHarness([], { storage })
    const agent = await h.app.agentLoop.resume(id, { provider: 'test', model: 'm' })
    expect(() => agent.inbox.nextTurn).toThrow(
      expect.objectContaining({
        code: 'INVALID_SPLICE',
        message: 'agent/inbox/spliced at seq 2: message a is already pending in the inbox',
      }),
    )
    expect(types(agent.session)).toEqual(['agent/inbox/spliced', 'user/message', 'agent/inbox/spliced'])
  })
})

describe('Inbox state when empty', () => {
  it('is the shared emptyInbox once a claim or clear empties it, and a change is still reported', async () => {
    const h = await createHarness()
    const agent = await h.create()
    const states: unknown[] = []
    h.app.sessionProjections.onChanged('inbox', (_session, state) => states.push(state))
    agent.inbox.append('next-turn', withId('a'))
    agent.inbox.clear()
    expect(h.app.agentLoop.inbox(agent.session)).toBe(emptyInbox)
    expect(states).toEqual([{ nextTurn: [withId('a')], nextStep: [] }, emptyInbox])
    expect(states[1]).toBe(emptyInbox)
  })
})
