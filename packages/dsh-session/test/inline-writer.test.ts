/**
 * Sessions over an unmodified `MemoryStorage` write each committed event to it at once (the inline
 * writer): no queue, no timer, nothing to wait for at a barrier. A refusal (a lost lease) keeps the
 * refused event and every later one; `flush` retries them in order and rejects with `STORAGE` while
 * the backend refuses. A subclass that overrides `appendBatch` still gets batches.
 */
import type { SessionId } from 'dsh-llm'
import { MemoryStorage, type SessionEvent } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { chunkDataEstimate } from '../src/chunk-snapshot.ts'
import { mountSessions, rejection, types, user } from './support.ts'

async function stored(storage: MemoryStorage, id: SessionId): Promise<SessionEvent[]> {
  const events: SessionEvent[] = []
  for await (const event of storage.read(id, 0)) events.push(event)
  return events
}

describe('inline writes to MemoryStorage', () => {
  test('every committed event is in the storage as soon as append returns, before any flush', async () => {
    const storage = new MemoryStorage()
    const app = await mountSessions({ storage })
    const session = await app.sessions.create()
    session.append('user/message', user('u0'))
    session.append('user/message', user('u1'))
    expect(await stored(storage, session.id)).toEqual(session.events)
    // Nothing is pending, so a barrier has nothing to wait for.
    expect(session.isDurable()).toBe(true)
    await session.flush()
    expect((await storage.load(session.id)).events).toEqual(session.events)
  })

  test('only an unmodified MemoryStorage writes inline; a subclass that overrides appendBatch gets batches', async () => {
    class Counting extends MemoryStorage {
      readonly batches: number[][] = []
      override async appendBatch(id: SessionId, events: readonly SessionEvent[], expectedSeq: number) {
        this.batches.push(events.map((event) => event.seq))
        return super.appendBatch(id, events, expectedSeq)
      }
    }
    expect(new MemoryStorage().writesInline).toBe(true)
    const counting = new Counting()
    expect(counting.writesInline).toBe(false)
    const app = await mountSessions({ storage: counting })
    const session = await app.sessions.create()
    session.append('user/message', user('u0'))
    session.append('user/message', user('u1'))
    expect(await stored(counting, session.id)).toEqual([])
    expect(session.isDurable()).toBe(false)
    await session.flush()
    expect(counting.batches).toEqual([[0, 1]])
    expect(session.isDurable()).toBe(true)
  })

  test('after the lease is lost, flush rejects naming the kept events and retries them once it is back', async () => {
    const storage = new MemoryStorage()
    const other = new MemoryStorage({ sharing: storage })
    const app = await mountSessions({ storage })
    const session = await app.sessions.create()
    session.append('user/message', user('u0'))
    // Another holder takes the session over, as a second process would.
    await storage.release(session.id)
    await other.acquire(session.id)
    session.append('user/message', user('u1'))
    session.append('user/message', user('u2'))
    expect(session.events).toHaveLength(3)
    expect(await rejection(session.flush())).toEqual({
      code: 'STORAGE',
      message: `session ${session.id}: could not persist events 1..2: session ${session.id}: append without holding the write lease`,
    })
    expect(types(await stored(storage, session.id))).toEqual(['user/message'])
    expect(session.isDurable()).toBe(false)
    // Still refused: the same error, nothing stored twice.
    expect((await rejection(session.flush())).code).toBe('STORAGE')
    await other.release(session.id)
    await storage.acquire(session.id)
    await session.flush()
    expect(await stored(storage, session.id)).toEqual(session.events)
    expect(session.isDurable()).toBe(true)
  })

  test('a run shared with the storage that grows after the lease is lost is read only up to what was stored', async () => {
    const storage = new MemoryStorage()
    const other = new MemoryStorage({ sharing: storage })
    const app = await mountSessions({ storage })
    const session = await app.sessions.create()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.appendChunk(1, 1, { type: 'text-delta', index: 0, text: 'a' })
    session.appendChunk(1, 1, { type: 'text-delta', index: 0, text: 'b' })
    await storage.release(session.id)
    await other.acquire(session.id)
    // The session's open run (which the storage shares) grows by a chunk the storage refused...
    session.appendChunk(1, 1, { type: 'text-delta', index: 0, text: 'c' })
    // ...while the other holder stores its own event at that seq.
    const theirs = { type: 'user/message', seq: 4, time: 7, data: user('u9') } as SessionEvent
    await other.appendBatch(session.id, [theirs], 4)
    const expected = [...session.events.slice(0, 4), theirs]
    expect(await stored(storage, session.id)).toEqual(expected)
    expect((await other.load(session.id)).events).toEqual(expected)
    expect(await stored(other, session.id)).toHaveLength(5)
  })

  test('events a closed session could not store stay out of the storage; a reopened session appends after what was stored', async () => {
    const storage = new MemoryStorage()
    const other = new MemoryStorage({ sharing: storage })
    const app = await mountSessions({ storage })
    const session = await app.sessions.create()
    session.append('user/message', user('u0'))
    await storage.release(session.id)
    await other.acquire(session.id)
    session.append('user/message', user('u1'))
    expect((await rejection(app.sessions.close(session))).code).toBe('CLOSE_FAILED')
    await other.release(session.id)
    expect(types((await storage.load(session.id)).events)).toEqual(['user/message'])
    const reopened = await app.sessions.open(session.id)
    expect(reopened.seq).toBe(1)
    reopened.append('user/message', user('u2'))
    expect(await stored(storage, session.id)).toEqual(reopened.events)
    expect(reopened.events.map((event) => (event.data as { id: string }).id)).toEqual(['u0', 'u2'])
    // The first session's log still holds what it could not store; the storage never does.
    expect(session.events).toHaveLength(2)
  })

  test('refused chunk events count toward the high-water mark with the size the write queue estimates', async () => {
    const data = {
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta', index: 0, text: 'x'.repeat(1000) },
    } as const
    const size = chunkDataEstimate(data) + 'assistant/chunk'.length
    for (const [highWaterMark, waits] of [
      [size, false],
      [size - 1, true],
    ] as const) {
      const storage = new MemoryStorage()
      const other = new MemoryStorage({ sharing: storage })
      const app = await mountSessions({ storage, highWaterMark })
      const session = await app.sessions.create()
      session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
      session.append('step/start', { turn: 1, step: 1 })
      await storage.release(session.id)
      await other.acquire(session.id)
      session.append('assistant/chunk', data)
      expect(session.mustWait()).toBe(waits)
      expect(types(await stored(storage, session.id))).toEqual(['turn/start', 'step/start'])
    }
  })

  test('a refused event stays refused until flush: later appends queue behind it in order', async () => {
    const storage = new MemoryStorage()
    const other = new MemoryStorage({ sharing: storage })
    const app = await mountSessions({ storage, highWaterMark: 1 })
    const session = await app.sessions.create()
    await storage.release(session.id)
    await other.acquire(session.id)
    session.append('user/message', user('u0'))
    // The lease comes back, but nothing is written before a flush retries: seq order is kept.
    await other.release(session.id)
    await storage.acquire(session.id)
    session.append('user/message', user('u1'))
    expect(await stored(storage, session.id)).toEqual([])
    // Over the (one-byte) mark while events wait: writing is paused, and waiting for room reports why.
    expect(session.mustWait()).toBe(true)
    expect(await rejection(session.writable())).toEqual({
      code: 'STORAGE',
      message: `session ${session.id}: could not persist events 0..1: session ${session.id}: append without holding the write lease`,
    })
    await session.flush()
    expect(session.mustWait()).toBe(false)
    await session.writable()
    expect(await stored(storage, session.id)).toEqual(session.events)
  })
})
