/** Issue 12's faults at the store level: each test names the fault it pins. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from 'cordis'
import { SessionId } from 'dsh-llm'
import Sessions, {
  type AppendIo,
  JsonlStorage,
  MemoryStorage,
  nodeAppendIo,
  SessionError,
  type SessionEvent,
  type SessionStorage,
  SessionWriter,
} from 'dsh-session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { header, tempDir, userEvent, userEvents } from './fixtures/events.ts'
import { assistant, callBlock, mountSessions, refusal, user } from './support.ts'

let dir: string
let dispose: () => void
beforeEach(() => {
  ;({ dir, dispose } = tempDir())
})
afterEach(() => dispose())

const id = SessionId('s1')
const locks = () => readdirSync(dir).filter((name) => name.endsWith('.lock'))

describe('1. oversized events', () => {
  it('refuses an event over the limit at once, writes nothing, and the session stays usable with no lock left', async () => {
    const app = await mountSessions({ storage: new JsonlStorage({ dir, maxEventBytes: 64 * 1024 }) })
    const session = await app.sessions.create({ id })
    session.append('user/message', user('u1'))
    const big = user('big', 'x'.repeat(100_000))
    const error = refusal(() => session.append('user/message', big))
    expect(error.code).toBe('EVENT_TOO_LARGE')
    expect(error.message).toMatch(
      /^session s1: user\/message at seq 1 is 1001\d\d bytes serialized, over the limit of 65536 bytes; nothing was written$/,
    )
    expect(session.seq).toBe(1)
    session.append('user/message', user('u2'))
    await session.flush()
    await app.sessions.close(session)
    expect(locks()).toEqual([])
    const loaded = await new JsonlStorage({ dir }).load(id)
    expect(loaded.events.map((event) => event.seq)).toEqual([0, 1])
  })

  it('takes the smaller of the store and storage limits', async () => {
    const app = await mountSessions({
      storage: new JsonlStorage({ dir, maxEventBytes: 4096 }),
      maxEventBytes: 1 << 30,
    })
    expect(app.sessions.maxEventBytes).toBe(4096)
  })
})

describe('4. one writer per session id in one process', () => {
  it('gives two concurrent opens of one id the same live session', async () => {
    const storage = new JsonlStorage({ dir })
    await storage.create(header('s1'))
    await storage.appendBatch(id, userEvents(0, 2), 0)
    await storage.close()
    const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
    const [a, b] = await Promise.all([app.sessions.open(id), app.sessions.open(id)])
    expect(a).toBe(b)
    expect(a.seq).toBe(2)
  })
})

/** An io whose sync fails with `code` from the `failFrom`th sync on. */
function failingSync(code: string, failFrom: number): AppendIo {
  let syncs = 0
  return {
    write: nodeAppendIo.write,
    sync: async (handle) => {
      if (++syncs >= failFrom) throw Object.assign(new Error(`${code}: injected`), { code })
      await nodeAppendIo.sync(handle)
    },
  }
}

describe('5. close failures', () => {
  it('rejects a close whose flush fails with CLOSE_FAILED carrying the cause, leaves no lock, and closes again quietly', async () => {
    const app = await mountSessions({ storage: new JsonlStorage({ dir, io: failingSync('EIO', 2) }) })
    const session = await app.sessions.create({ id })
    session.append('user/message', user('u1'))
    await session.flush()
    session.append('user/message', user('u2'))
    let error: unknown
    await app.sessions.close(session).catch((e: unknown) => {
      error = e
    })
    expect(error).toBeInstanceOf(SessionError)
    const closeError = error as SessionError
    expect(closeError.code).toBe('CLOSE_FAILED')
    expect(closeError.message).toMatch(
      /^session s1: closing failed \(the session is closed and its lease released\): /,
    )
    expect((closeError.cause as SessionError).code).toBe('STORAGE')
    expect(((closeError.cause as SessionError).cause as SessionError).code).toBe('STORAGE')
    expect(locks()).toEqual([])
    await app.sessions.close(session)
    expect(refusal(() => session.append('user/message', user('u3'))).code).toBe('CLOSED')
    expect((await new JsonlStorage({ dir }).load(id)).events.map((event) => event.seq)).toEqual([0])
  })

  it('leaves no lock when the app is disposed while an append is pending', async () => {
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const io: AppendIo = {
      write: nodeAppendIo.write,
      sync: async (handle) => {
        await gate
        await nodeAppendIo.sync(handle)
      },
    }
    const app = new Context()
    const fiber = await app.plugin(Sessions, { storage: new JsonlStorage({ dir, io }) })
    const session = await app.sessions.create({ id })
    session.append('user/message', user('u1'))
    const flushed = session.flush()
    const disposed = fiber.dispose()
    release()
    await Promise.all([flushed, disposed])
    expect(locks()).toEqual([])
  })
})

describe('7. list and open survive bad entries', () => {
  it('lists the good sessions beside each bad entry with its path and reason, and opens the good ones', async () => {
    const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
    await app.sessions.close(await app.sessions.create({ id }))
    writeFileSync(join(dir, 'garbage.jsonl'), '\u0000\u0001 not json\n')
    writeFileSync(join(dir, 'empty.jsonl'), '')
    writeFileSync(join(dir, 'bad name!.jsonl'), '{}\n')
    const listing = await app.sessions.list()
    expect(listing.sessions.map((entry) => entry.sessionId)).toEqual(['s1'])
    expect(listing.problems.map(({ path, reason }) => ({ path, reason }))).toEqual([
      { path: join(dir, 'bad name!.jsonl'), reason: 'the file name is not a usable session id' },
      {
        path: join(dir, 'empty.jsonl'),
        reason: `${join(dir, 'empty.jsonl')}:1: the header line is incomplete`,
      },
      {
        path: join(dir, 'garbage.jsonl'),
        reason: `${join(dir, 'garbage.jsonl')}:1: the header line is not JSON`,
      },
    ])
    const session = await app.sessions.open(id)
    expect(session.seq).toBe(0)
  })
})

describe('8. deterministic repair', () => {
  it('repairs two copies of one damaged file with identical closer bytes, timed from the log', async () => {
    const source = await mountSessions({ storage: new JsonlStorage({ dir }) })
    const session = await source.sessions.create({ id })
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', { turn: 1, step: 1, message: assistant('a1', [callBlock('c1')]) })
    await session.flush()
    const damaged = readFileSync(join(dir, 's1.jsonl'))
    // The writer "crashed": its file stays as it was, and its lock is gone with it.
    await source.sessions.close(session)
    const repaired: string[] = []
    for (const start of [5_000, 9_000_000]) {
      writeFileSync(join(dir, 's1.jsonl'), damaged)
      let now = start
      const app = await mountSessions({ storage: new JsonlStorage({ dir }), clock: () => now++ })
      const opened = await app.sessions.open(id)
      expect(opened.loadReport?.repairedEvents).toBe(3)
      await app.sessions.close(opened)
      repaired.push(readFileSync(join(dir, 's1.jsonl'), 'utf8').slice(damaged.length))
    }
    expect(repaired[0]).toBe(repaired[1])
    const times = (repaired[0] ?? '')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { time: number }).time)
    expect(times).toEqual([1003, 1003, 1003])
  })
})

describe('6. backpressure', () => {
  /** An io whose syncs wait until `open()` is called. */
  function stalledSync(): { io: AppendIo; open: () => void } {
    let open: () => void = () => undefined
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    return {
      io: {
        write: nodeAppendIo.write,
        sync: async (handle) => {
          await gate
          await nodeAppendIo.sync(handle)
        },
      },
      open: () => open(),
    }
  }

  it('makes writable() wait while unsynced events pass the high-water mark behind a stalled sync', async () => {
    const stalled = stalledSync()
    const app = await mountSessions({
      storage: new JsonlStorage({ dir, io: stalled.io }),
      highWaterMark: 256 * 1024,
    })
    const session = await app.sessions.create({ id })
    for (let i = 0; i < 3; i++) session.append('user/message', user(`u${i}`, 'x'.repeat(64 * 1024)))
    expect(session.mustWait()).toBe(false)
    await session.writable()
    for (let i = 3; i < 6; i++) session.append('user/message', user(`u${i}`, 'x'.repeat(64 * 1024)))
    expect(session.mustWait()).toBe(true)
    let ready = false
    const writable = session.writable().then(() => {
      ready = true
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(ready).toBe(false)
    stalled.open()
    await writable
    expect(session.mustWait()).toBe(false)
    await session.flush()
    await app.sessions.close(session)
    expect((await new JsonlStorage({ dir }).load(id)).events.length).toBe(6)
  })

  it('rejects a waiting writable() with the failure when writing stops', async () => {
    const app = await mountSessions({
      storage: new JsonlStorage({ dir, io: failingSync('ENOSPC', 1) }),
      highWaterMark: 1024,
    })
    const session = await app.sessions.create({ id })
    session.append('user/message', user('u1', 'x'.repeat(4096)))
    const error = await session.writable().then(
      () => undefined,
      (e: SessionError) => e,
    )
    expect(error?.code).toBe('STORAGE')
    expect(error?.message).toMatch(/^session s1: could not persist events 0\.\.0: /)
    await expect(session.writable()).rejects.toBe(error)
  })

  it('splits a backlog into appendBatch calls of at most maxBatchBytes', async () => {
    const memory = new MemoryStorage()
    const batches: number[] = []
    const storage: SessionStorage = Object.assign(Object.create(memory) as MemoryStorage, {
      appendBatch: (sessionId: SessionId, events: readonly SessionEvent[], expectedSeq: number) => {
        batches.push(events.length)
        return memory.appendBatch(sessionId, events, expectedSeq)
      },
    })
    await memory.create(header('s1'))
    const writer = new SessionWriter(storage, id, 0, { maxBatchBytes: 100_000 })
    for (let i = 0; i < 20; i++) writer.enqueue(userEvent(i, 'x'.repeat(30_000)))
    await writer.flush()
    expect(batches).toEqual([3, 3, 3, 3, 3, 3, 2])
    expect(writer.unsyncedBytes).toBe(0)
  })
})
