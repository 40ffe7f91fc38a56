import type { SessionId } from 'dsh-llm'
import {
  DEFAULT_COMMIT_DELAY_MS,
  MemoryStorage,
  type SessionEvent,
  type SessionFileHeader,
  type SessionStorage,
  SessionWriter,
} from 'dsh-session'
import { describe, expect, test, vi } from 'vitest'
import { mountSessions, rejection, user } from './support.ts'

/** A storage that records each appendBatch call and can be told to fail or to hold writes. */
class RecordingStorage extends MemoryStorage implements SessionStorage {
  readonly batches: number[][] = []
  failNext = 0
  hold: Promise<void> | undefined

  override async appendBatch(sessionId: SessionId, events: readonly SessionEvent[], expectedSeq: number) {
    this.batches.push(events.map((event) => event.seq))
    if (this.hold !== undefined) await this.hold
    if (this.failNext > 0) {
      this.failNext--
      throw new Error('disk full')
    }
    return super.appendBatch(sessionId, events, expectedSeq)
  }
}

function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** Past the writer's default commit delay. */
function afterCommitDelay(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, DEFAULT_COMMIT_DELAY_MS + 5))
}

async function setup(config: { commitDelayMs?: number } = {}) {
  const storage = new RecordingStorage()
  const app = await mountSessions({ storage, ...config })
  const session = await app.sessions.create()
  return { storage, session }
}

describe('SessionWriter (group commit)', () => {
  test('events appended in one synchronous burst go out as one appendBatch', async () => {
    const { storage, session } = await setup()
    for (let i = 0; i < 5; i++) session.append('user/message', user(`u${i}`))
    await session.flush()
    expect(storage.batches).toEqual([[0, 1, 2, 3, 4]])
    expect((await storage.load(session.id)).events).toEqual(session.events)
  })

  test('everything enqueued while a write is in flight goes out as the next single batch', async () => {
    const { storage, session } = await setup()
    let release = () => {}
    storage.hold = new Promise((resolve) => {
      release = resolve
    })
    session.append('user/message', user('u0'))
    await afterCommitDelay()
    expect(storage.batches).toEqual([[0]])
    for (let i = 1; i <= 4; i++) session.append('user/message', user(`u${i}`))
    const flushed = session.flush()
    storage.hold = undefined
    release()
    await flushed
    expect(storage.batches).toEqual([[0], [1, 2, 3, 4]])
  })

  test('writing starts on its own after the commit delay, without a flush', async () => {
    const { storage, session } = await setup()
    session.append('user/message', user('u0'))
    await nextMacrotask()
    expect(storage.batches).toEqual([])
    await afterCommitDelay()
    expect(storage.batches).toEqual([[0]])
    await session.flush()
    expect((await storage.load(session.id)).events).toEqual(session.events)
  })

  test('a barrier inside the commit delay carries everything in one batch; nothing is written twice', async () => {
    const { storage, session } = await setup()
    session.append('user/message', user('u0'))
    // The loop yields between two barriers (a time slice, a tool): no write starts meanwhile.
    await nextMacrotask()
    session.append('user/message', user('u1'))
    await session.flush()
    await afterCommitDelay()
    expect(storage.batches).toEqual([[0, 1]])
  })

  test('an event appended after a flush still waits its full commit delay', async () => {
    // Wide margins: only a stall of over 70 ms between two checks could blur them.
    const { storage, session } = await setup({ commitDelayMs: 200 })
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    session.append('user/message', user('u0'))
    await sleep(100)
    await session.flush()
    session.append('user/message', user('u1'))
    // The delay armed for u0 ends here; u1 was appended ~100 ms ago and keeps waiting.
    await sleep(130)
    expect(storage.batches).toEqual([[0]])
    await sleep(170)
    expect(storage.batches).toEqual([[0], [1]])
  })

  test('a writer flushed more often than its commit delay moves one timer forward and never lets it expire', async () => {
    // Wide margins: only a stall of over 180 ms between two flushes would let the timer expire.
    const { storage, session } = await setup({ commitDelayMs: 200 })
    const realSetTimeout = globalThis.setTimeout
    const sleep = (ms: number) => new Promise((resolve) => realSetTimeout(resolve, ms))
    const armed = vi.spyOn(globalThis, 'setTimeout')
    try {
      for (let i = 0; i < 12; i++) {
        session.append('user/message', user(`u${i}`))
        await sleep(20)
        await session.flush()
      }
      // One timer, armed by the first event and restarted by each first event after a flush.
      expect(armed).toHaveBeenCalledTimes(1)
      // Every event went out with its flush: no background write started between two of them.
      expect(storage.batches).toEqual([[0], [1], [2], [3], [4], [5], [6], [7], [8], [9], [10], [11]])
    } finally {
      armed.mockRestore()
    }
  })

  test('closing a session leaves no writer timer behind', async () => {
    const storage = new RecordingStorage()
    const app = await mountSessions({ storage })
    const session = await app.sessions.create()
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      session.append('user/message', user('u0'))
      await session.flush()
      // Left armed across the flush (cheaper than clearing it at every barrier)...
      expect(vi.getTimerCount()).toBe(1)
      await app.sessions.close(session)
      // ...and cleared once the session is closed.
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
    expect(storage.batches).toEqual([[0]])
  })

  test('commitDelayMs 0 starts writing one macrotask after an append', async () => {
    const { storage, session } = await setup({ commitDelayMs: 0 })
    session.append('user/message', user('u0'))
    await Promise.resolve()
    expect(storage.batches).toEqual([])
    await nextMacrotask()
    expect(storage.batches).toEqual([[0]])
  })

  test('appends spread over microtasks and then a flush go out as one appendBatch', async () => {
    const { storage, session } = await setup()
    for (let i = 0; i < 4; i++) {
      session.append('user/message', user(`u${i}`))
      await Promise.resolve()
    }
    await session.flush()
    expect(storage.batches).toEqual([[0, 1, 2, 3]])
    await afterCommitDelay()
    expect(storage.batches).toEqual([[0, 1, 2, 3]])
  })

  test('flush resolves at once when everything is durable; a flush waits for the batch holding its events', async () => {
    const { storage, session } = await setup()
    await session.flush()
    expect(storage.batches).toEqual([])
    session.append('user/message', user('u0'))
    const first = session.flush()
    session.append('user/message', user('u1'))
    await first
    expect(storage.batches).toEqual([[0, 1]])
    await session.flush()
    expect(storage.batches).toEqual([[0, 1]])
    expect((await storage.load(session.id)).events.map((event) => event.seq)).toEqual([0, 1])
  })

  test('a backend failure rejects flush with STORAGE, keeps the events queued, and a later flush retries them', async () => {
    const { storage, session } = await setup()
    storage.failNext = 1
    session.append('user/message', user('u0'))
    session.append('user/message', user('u1'))
    expect(await rejection(session.flush())).toEqual({
      code: 'STORAGE',
      message: `session ${session.id}: could not persist events 0..1: disk full`,
    })
    session.append('user/message', user('u2'))
    await session.flush()
    expect(storage.batches).toEqual([
      [0, 1],
      [0, 1, 2],
    ])
    expect((await storage.load(session.id)).events).toEqual(session.events)
  })

  test('works directly over a storage: nextSeq sets the expected seq of the first batch', async () => {
    const storage = new RecordingStorage()
    const header: SessionFileHeader = {
      format: 'dsh-session',
      version: 1,
      sessionId: 's' as SessionId,
      createdAt: 0,
    }
    await storage.create(header)
    const event = (seq: number) =>
      Object.freeze({ type: 'session/end-seed', seq, time: 0, data: {} }) as SessionEvent
    await storage.appendBatch(header.sessionId, [event(0)], 0)
    storage.batches.length = 0
    const writer = new SessionWriter(storage, header.sessionId, 1)
    writer.enqueue(event(1))
    writer.enqueue(event(2))
    await writer.flush()
    expect(storage.batches).toEqual([[1, 2]])
    expect(writer.durableSeq).toBe(3)
  })
})
