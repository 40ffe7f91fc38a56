import { applyInboxSplice, emptyInbox, foldInbox, type InboxState } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { mountSessions, refusal, user } from './support.ts'

const ids = (state: InboxState) => ({
  nextTurn: state.nextTurn.map((message) => message.id),
  nextStep: state.nextStep.map((message) => message.id),
})

describe('applyInboxSplice', () => {
  test('inserts, removes and replaces in the target list, returning a new frozen state', () => {
    let state = applyInboxSplice(
      emptyInbox,
      { target: 'next-turn', start: 0, inserted: [user('a'), user('b')] },
      0,
    )
    state = applyInboxSplice(state, { target: 'next-step', start: 0, inserted: [user('s')] }, 1)
    state = applyInboxSplice(state, { target: 'next-turn', start: 1, inserted: [user('c')] }, 2)
    expect(ids(state)).toEqual({ nextTurn: ['a', 'c', 'b'], nextStep: ['s'] })
    const removed = applyInboxSplice(
      state,
      { target: 'next-turn', start: 0, removedCount: 2, inserted: [] },
      3,
    )
    expect(ids(removed)).toEqual({ nextTurn: ['b'], nextStep: ['s'] })
    expect(ids(state)).toEqual({ nextTurn: ['a', 'c', 'b'], nextStep: ['s'] })
    expect(Object.isFrozen(removed)).toBe(true)
    expect(Object.isFrozen(removed.nextTurn)).toBe(true)
    expect(removed.nextStep).toBe(state.nextStep)
  })

  test('a replacement may keep the id of the message it removes', () => {
    const state = applyInboxSplice(
      emptyInbox,
      { target: 'next-step', start: 0, inserted: [user('a', 'old')] },
      0,
    )
    const next = applyInboxSplice(
      state,
      { target: 'next-step', start: 0, removedCount: 1, inserted: [user('a', 'new')] },
      1,
    )
    expect(next.nextStep).toEqual([user('a', 'new')])
  })

  const seeded = applyInboxSplice(
    emptyInbox,
    { target: 'next-turn', start: 0, inserted: [user('a'), user('b')] },
    0,
  )

  test.each([
    [{ target: 'next-turn', start: 3, inserted: [] }, 'start 3 is outside the next-turn list of 2 messages'],
    [
      { target: 'next-turn', start: -1, inserted: [] },
      'start -1 is outside the next-turn list of 2 messages',
    ],
    [
      { target: 'next-turn', start: 0.5, inserted: [] },
      'start 0.5 is outside the next-turn list of 2 messages',
    ],
    [
      { target: 'next-step', start: 0, removedCount: 1, inserted: [] },
      'removedCount 1 at start 0 exceeds the next-step list of 0 messages',
    ],
    [
      { target: 'next-turn', start: 1, removedCount: 2, inserted: [] },
      'removedCount 2 at start 1 exceeds the next-turn list of 2 messages',
    ],
    [
      { target: 'next-turn', start: 0, removedCount: Number.MAX_SAFE_INTEGER + 2, inserted: [] },
      'removedCount 9007199254740992 at start 0 exceeds the next-turn list of 2 messages',
    ],
    [{ target: 'next-step', start: 0, inserted: [user('b')] }, 'message b is already pending in the inbox'],
    [
      { target: 'next-step', start: 0, inserted: [user('x'), user('x')] },
      'message x is inserted twice in one splice',
    ],
  ])('refuses %j naming the seq', (splice, problem) => {
    expect(refusal(() => applyInboxSplice(seeded, splice as never, 7))).toEqual({
      code: 'INVALID_SPLICE',
      message: `agent/inbox/spliced at seq 7: ${problem}`,
    })
  })
})

describe('foldInbox', () => {
  test('folds the spliced events of a log and names the seq of a bad one', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [user('a')] })
    session.append('user/message', user('u'))
    session.append('agent/inbox/spliced', { target: 'next-step', start: 0, inserted: [user('b')] })
    expect(ids(foldInbox(session.events))).toEqual({ nextTurn: ['a'], nextStep: ['b'] })
    session.append('agent/inbox/spliced', { target: 'next-step', start: 0, inserted: [user('a')] })
    expect(refusal(() => foldInbox(session.events))).toEqual({
      code: 'INVALID_SPLICE',
      message: 'agent/inbox/spliced at seq 3: message a is already pending in the inbox',
    })
    expect(foldInbox([])).toBe(emptyInbox)
  })
})
