import { Context } from 'cordis'
import { compactionClosers } from 'dsh-compaction'
import { CallId, createToolResultMessage, userText } from 'dsh-llm'
import { type Session, Sessions, type SurfaceMeta } from 'dsh-session'
import { describe, expect, test } from 'vitest'

function append(session: Session, type: string, data: unknown, surface?: SurfaceMeta): void {
  ;(session.append as (type: string, data: unknown, surface?: SurfaceMeta) => unknown).call(
    session,
    type,
    data,
    surface,
  )
}

function result(id: string, text: string) {
  return createToolResultMessage({
    id,
    callId: CallId(id.replace('r', 'c')),
    content: [{ type: 'text', text }],
  })
}

/** A session with two answered calls in one turn, then a prune compaction that wrote `written` of its 2 replaces. */
async function openPrune(written: number, announced = 2) {
  const app = new Context()
  await app.plugin(Sessions)
  const session = await app.sessions.create()
  append(session, 'user/message', userText('read'))
  append(session, 'turn/start', { turn: 1, trigger: { kind: 'queued' } })
  append(session, 'request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' })
  append(session, 'step/start', { turn: 1, step: 1 })
  const calls = ['c1', 'c2'].map((id) => ({
    type: 'tool-call',
    id: CallId(id),
    name: 'read',
    arguments: '{}',
  }))
  append(session, 'assistant/message', {
    turn: 1,
    step: 1,
    message: {
      id: 'a1',
      role: 'assistant',
      content: calls,
      source: { kind: 'model', provider: 'p', model: 'm' },
    },
  })
  append(session, 'tool/result', { turn: 1, step: 1, message: result('r1', 'one') })
  append(session, 'tool/result', { turn: 1, step: 1, message: result('r2', 'two') })
  append(session, 'step/end', { turn: 1, step: 1 })
  append(session, 'turn/end', { turn: 1, reason: { kind: 'completed' } })
  const before = session.deriveMessages()
  append(session, 'compaction/start', {
    id: 'compaction-1',
    trigger: 'manual',
    strategy: 'prune',
    window: 1000,
    tokensBefore: 50,
    replaces: announced,
  })
  const sources = [5, 6]
  for (let k = 0; k < written; k++) {
    append(session, 'user/message', result(`compaction-1:r${k + 1}`, 'pruned'), {
      op: 'replace',
      start: k + 2,
      end: k + 3,
      sourceEventSeqs: [sources[k] ?? -1],
    })
  }
  return { app, session, before }
}

describe('compactionClosers', () => {
  test('nothing open: no closers', async () => {
    const { session } = await openPrune(2)
    append(session, 'compaction/end', { id: 'compaction-1', outcome: 'completed' })
    expect(compactionClosers(session.events)).toEqual([])
  })

  test('every announced replace written: only the end, marked repaired', async () => {
    const { session } = await openPrune(2)
    expect(compactionClosers(session.events)).toEqual([
      { type: 'compaction/end', data: { id: 'compaction-1', outcome: 'completed', repaired: true } },
    ])
  })

  test('half written: the written replace is put back, then the end says interrupted', async () => {
    const { session, before } = await openPrune(1)
    const closers = compactionClosers(session.events)
    expect(closers).toEqual([
      {
        type: 'user/message',
        data: before[2],
        surface: { op: 'replace', start: 2, end: 3, sourceEventSeqs: [10] },
      },
      { type: 'compaction/end', data: { id: 'compaction-1', outcome: 'interrupted', repaired: true } },
    ])
    for (const closer of closers) append(session, closer.type, closer.data, closer.surface)
    expect(session.deriveMessages()).toEqual(before)
  })

  test('a fork that cut the rollback short puts back only what is still pruned', async () => {
    const { app, session, before } = await openPrune(2, 3)
    // The rollback had put back the second pruned result (seq 11) when the fork was cut.
    append(session, 'user/message', before[3], { op: 'replace', start: 3, end: 4, sourceEventSeqs: [11] })
    expect(compactionClosers(session.events)).toEqual([
      {
        type: 'user/message',
        data: before[2],
        surface: { op: 'replace', start: 2, end: 3, sourceEventSeqs: [10] },
      },
      { type: 'compaction/end', data: { id: 'compaction-1', outcome: 'interrupted', repaired: true } },
    ])
    const child = await app.sessions.fork(session, session.seq)
    expect(child.deriveMessages()).toEqual(before)
  })

  test('an open compaction is closed when the session is opened again', async () => {
    const { app, session, before } = await openPrune(1)
    await app.sessions.close(session)
    const reopened = await app.sessions.open(session.id)
    expect(reopened.loadReport?.repairedEvents).toBe(2)
    expect(reopened.deriveMessages()).toEqual(before)
  })
})
