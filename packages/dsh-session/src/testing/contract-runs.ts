/**
 * The storage contract's chunk-run cases: a backend under a live `Sessions` store keeps a step's
 * chunk entries (which reach it as shared runs, run lines or built events, depending on the backend)
 * and gives back exactly the events the session holds.
 */
import { Context } from 'cordis'
import { CallId, MessageId, type SessionId, type StreamChunk } from 'dsh-llm'
import { expect, it } from 'vitest'
import type { SessionStorage } from '../storage/types.ts'
import { Sessions } from '../store.ts'
import type { Session } from '../types.ts'
import type { StorageContractBacking } from './contract-types.ts'

/** A store over `storage` with a fixed clock (time 1000, 1001, ...). */
async function storeOver(storage: SessionStorage): Promise<Context> {
  const app = new Context()
  let now = 1000
  await app.plugin(Sessions, { storage, clock: () => now++ })
  return app
}

function delta(text: string): StreamChunk {
  return { type: 'text-delta', index: 0, text }
}

function openStep(session: Session): void {
  session.append('user/message', {
    id: MessageId('u1'),
    role: 'user',
    content: [{ type: 'text', text: 'hi' }],
    source: { kind: 'user' },
  })
  session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
  session.append('step/start', { turn: 1, step: 1 })
  session.appendChunk(1, 1, { type: 'block-start', index: 0, blockType: 'text' })
}

function closeTurn(session: Session, text: string): void {
  session.appendChunk(1, 1, { type: 'block-end', index: 0, block: { type: 'text', text } })
  session.appendChunk(1, 1, { type: 'finish', reason: { kind: 'stop' } })
  session.append('assistant/message', {
    turn: 1,
    step: 1,
    message: {
      id: MessageId('a1'),
      role: 'assistant',
      content: [{ type: 'text', text }],
      source: { kind: 'model', provider: 'p', model: 'm' },
    },
  })
  session.append('step/end', { turn: 1, step: 1 })
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
}

/** The events of `session` as JSON (what a backend must give back, byte for byte). */
function json(session: Session): string {
  return JSON.stringify(session.events)
}

/**
 * Defines the chunk-run cases. `fresh` makes the test's backing; `open` opens an instance over it
 * that the suite closes after the test.
 */
export function describeRunCases(
  fresh: () => Promise<StorageContractBacking>,
  open: (from: StorageContractBacking) => Promise<SessionStorage>,
  id: SessionId,
): void {
  it('keeps the chunk entries of a step that several writes carried, and loads them back as the session holds them', async () => {
    const from = await fresh()
    const app = await storeOver(await open(from))
    const session = await app.sessions.create({ id })
    openStep(session)
    for (const part of ['a', 'b', 'c']) session.appendChunk(1, 1, delta(part))
    await session.flush()
    for (const part of ['d', 'e']) session.appendChunk(1, 1, delta(part))
    await session.flush()
    session.appendChunk(1, 1, delta('f'))
    closeTurn(session, 'abcdef')
    const expected = json(session)
    await app.sessions.close(session)
    const loaded = await (await open(from)).load(id)
    expect(JSON.stringify(loaded.events)).toBe(expected)
    const reader = await open(from)
    const tail: string[] = []
    for await (const event of reader.read(id, 5)) tail.push(`${event.seq}:${event.type}`)
    expect(tail.slice(0, 3)).toEqual(['5:assistant/chunk', '6:assistant/chunk', '7:assistant/chunk'])
  })

  it('reopens a log that stops inside a run (a crash mid-stream): the chunks come back, the turn is closed', async () => {
    const from = await fresh()
    const app = await storeOver(await open(from))
    const session = await app.sessions.create({ id })
    openStep(session)
    for (const part of ['a', 'b']) session.appendChunk(1, 1, delta(part))
    const before = json(session)
    await app.sessions.close(session)
    const next = await storeOver(await open(from))
    const reopened = await next.sessions.open(id)
    expect(reopened.loadReport).toMatchObject({ repairedEvents: 2 })
    expect(JSON.stringify(reopened.events.slice(0, 6))).toBe(before)
    expect(reopened.events.slice(6).map((event) => event.type)).toEqual(['step/end', 'turn/end'])
    await next.sessions.close(reopened)
  })

  it('forks at the boundary after a run: the child holds the parent’s events, chunks included, and loads them', async () => {
    const from = await fresh()
    const app = await storeOver(await open(from))
    const session = await app.sessions.create({ id })
    openStep(session)
    for (const part of ['a', 'b', 'c']) session.appendChunk(1, 1, delta(part))
    closeTurn(session, 'abc')
    const child = await app.sessions.fork(session, session.seq)
    const seed = JSON.stringify(session.events)
    expect(JSON.stringify(child.events.slice(0, session.seq))).toBe(seed)
    // The child's own step runs on where the seed ended.
    child.append('turn/start', { turn: 2, trigger: { kind: 'queued' } })
    child.append('step/start', { turn: 2, step: 1 })
    child.appendChunk(2, 1, { type: 'tool-call-delta', index: 0, id: CallId('c1'), argumentsDelta: '{}' })
    const expected = json(child)
    await app.sessions.close(child)
    const loaded = await (await open(from)).load(child.id)
    expect(JSON.stringify(loaded.events)).toBe(expected)
    expect(loaded.header.parent).toEqual({ sessionId: id, seedLength: session.seq })
  })
}
