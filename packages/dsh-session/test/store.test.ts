import { appendFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from 'cordis'
import { CallId, SessionId } from 'dsh-llm'
import Sessions, { JsonlStorage, MemoryStorage, type Session, type SessionEvent } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { header, tempDir, userEvent, userEvents } from './fixtures/events.ts'
import { assistant, callBlock, mountSessions, rejection, types, user } from './support.ts'

function completedTurn(session: Session, turn: number): void {
  session.append('user/message', user(`u${turn}`))
  session.append('turn/start', { turn, trigger: { kind: 'queued' } })
  session.append('step/start', { turn, step: 1 })
  session.append('assistant/message', {
    turn,
    step: 1,
    message: assistant(`a${turn}`, [{ type: 'text', text: 'ok' }]),
  })
  session.append('step/end', { turn, step: 1 })
  session.append('turn/end', { turn, reason: { kind: 'completed' } })
}

describe('Sessions store', () => {
  test('open reports a torn final line it cut off on the session (loadReport)', async () => {
    const { dir, dispose } = tempDir()
    try {
      const storage = new JsonlStorage({ dir })
      await storage.create(header('torn'))
      await storage.appendBatch(SessionId('torn'), userEvents(0, 2), 0)
      await storage.release(SessionId('torn'))
      appendFileSync(join(dir, 'torn.jsonl'), JSON.stringify(userEvent(2)).slice(0, 25))
      const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
      const session = await app.sessions.open(SessionId('torn'))
      expect(session.seq).toBe(2)
      expect(session.loadReport).toEqual({ truncatedTail: { line: 4, bytes: 25 }, repairedEvents: 0 })
      await app.sessions.close(session)
    } finally {
      dispose()
    }
  })

  test('await app.plugin(Sessions) provides sessions and sessionProjections', async () => {
    const app = new Context()
    await app.plugin(Sessions)
    expect(app.sessions).toBeDefined()
    expect(app.sessionProjections).toBeDefined()
  })

  test('create, get, list; session/created fires; a taken id is refused', async () => {
    const app = await mountSessions()
    const created: string[] = []
    app.on('session/created', (session) => void created.push(session.id))
    const session = await app.sessions.create({ id: SessionId('s1') })
    expect(session.id).toBe('s1')
    expect(session.seq).toBe(0)
    expect(app.sessions.get(SessionId('s1'))).toBe(session)
    expect(app.sessions.get(SessionId('nope'))).toBeUndefined()
    expect(await app.sessions.list()).toEqual({
      sessions: [{ format: 'dsh-session', version: 2, sessionId: 's1', createdAt: 1000 }],
      problems: [],
    })
    expect(created).toEqual(['s1'])
    expect(await rejection(app.sessions.create({ id: SessionId('s1') }))).toEqual({
      code: 'ALREADY_EXISTS',
      message: 'session s1 already exists',
    })
  })

  test('close flushes, releases the lease and fires session/disposed; open loads it back', async () => {
    const storage = new MemoryStorage()
    const app = await mountSessions({ storage })
    const disposed: string[] = []
    app.on('session/disposed', (session) => void disposed.push(session.id))
    const session = await app.sessions.create({ id: SessionId('s1') })
    completedTurn(session, 1)
    await app.sessions.close(session)
    await app.sessions.close(session)
    expect(disposed).toEqual(['s1'])
    expect(app.sessions.get(session.id)).toBeUndefined()
    const reopened = await app.sessions.open(session.id)
    expect(reopened).not.toBe(session)
    expect(reopened.events).toEqual(session.events)
    expect(reopened.lastTurn()).toBe(1)
    expect(reopened.deriveMessages().map((message) => message.id)).toEqual(['u1', 'a1'])
    expect(await app.sessions.open(session.id)).toBe(reopened)
    completedTurn(reopened, 2)
    await app.sessions.flush(reopened)
    expect((await storage.load(session.id)).events).toEqual(reopened.events)
  })

  test('a second writer is refused while the lease is held', async () => {
    const storage = new MemoryStorage()
    const first = await mountSessions({ storage })
    const second = await mountSessions({ storage })
    const session = await first.sessions.create({ id: SessionId('s1') })
    expect(await rejection(second.sessions.open(session.id))).toEqual({
      code: 'LOCKED',
      message: 'session s1 is held by another writer',
    })
    expect(await rejection(second.sessions.open(SessionId('missing')))).toEqual({
      code: 'NOT_FOUND',
      message: 'no stored session missing',
    })
  })

  test('open closes a crashed turn with the repair closers, through the normal append path, durably', async () => {
    const storage = new MemoryStorage()
    const crashed = await mountSessions({ storage })
    const session = await crashed.sessions.create({ id: SessionId('s1') })
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', { turn: 1, step: 1, message: assistant('a1', [callBlock('c1')]) })
    session.append('tool/call', { turn: 1, step: 1, callId: CallId('c1'), name: 'read', arguments: '{}' })
    await session.flush()
    await storage.release(session.id)

    const app = await mountSessions({ storage })
    const seen: SessionEvent[] = []
    app.on('session/event', (_session, event) => void seen.push(event))
    const reopened = await app.sessions.open(session.id)
    expect(types(reopened.events)).toEqual([
      'turn/start',
      'step/start',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(seen.map((event) => event.seq)).toEqual([4, 5, 6])
    expect(reopened.events[6]?.data).toEqual({ turn: 1, reason: { kind: 'interrupted' } })
    expect(reopened.openTurn()).toBeUndefined()
    expect(reopened.loadReport).toEqual({ repairedEvents: 3 })
    expect(session.loadReport).toBeUndefined()
    expect((await storage.load(session.id)).events).toEqual(reopened.events)
  })

  test('a guard that refuses a repair closer fails open and releases the lease', async () => {
    const storage = new MemoryStorage()
    const crashed = await mountSessions({ storage })
    const session = await crashed.sessions.create({ id: SessionId('s1') })
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    await session.flush()
    await storage.release(session.id)
    const app = await mountSessions({ storage })
    const dispose = app.sessions.guard(() => {
      throw new Error('no')
    })
    await expect(app.sessions.open(session.id)).rejects.toThrow('no')
    await dispose()
    const reopened = await app.sessions.open(session.id)
    expect(types(reopened.events)).toEqual(['turn/start', 'turn/end'])
  })

  test('a stored log that breaks the enclosure rules is refused on open, naming the seq; the lease is released', async () => {
    const storage = new MemoryStorage()
    const header = { format: 'dsh-session', version: 1, sessionId: SessionId('bad'), createdAt: 0 } as const
    await storage.create(header)
    const events = [
      { type: 'turn/start', seq: 0, time: 0, data: { turn: 1, trigger: { kind: 'queued' } } },
      { type: 'step/end', seq: 1, time: 0, data: { turn: 1, step: 1 } },
    ] as unknown as SessionEvent[]
    await storage.appendBatch(header.sessionId, events, 0)
    await storage.release(header.sessionId)
    const app = await mountSessions({ storage })
    expect(await rejection(app.sessions.open(header.sessionId))).toEqual({
      code: 'ENCLOSURE',
      message: 'step/end at seq 1 needs an open step; turn 1 has none open',
    })
    await storage.acquire(header.sessionId)
  })

  test('disposing the plugin closes every live session', async () => {
    const app = new Context()
    const fiber = app.plugin(Sessions)
    await fiber
    const disposed: string[] = []
    app.on('session/disposed', (session) => void disposed.push(session.id))
    const a = await app.sessions.create({ id: SessionId('a') })
    await app.sessions.create({ id: SessionId('b') })
    a.append('user/message', user('u1'))
    await fiber.dispose()
    expect(disposed.sort()).toEqual(['a', 'b'])
    expect(() => a.append('user/message', user('u2'))).toThrow(
      'session a is closed; cannot append user/message',
    )
  })
})

describe('fork', () => {
  test('the child is seeded with the prefix (same seqs), then session/end-seed, and records its parent', async () => {
    const storage = new MemoryStorage()
    const app = await mountSessions({ storage })
    const source = await app.sessions.create({ id: SessionId('parent') })
    completedTurn(source, 1)
    completedTurn(source, 2)
    const child = await app.sessions.fork(source, 6)
    expect(child.id).not.toBe(source.id)
    expect(child.parent).toEqual({ sessionId: 'parent', seedLength: 6 })
    expect(child.events.slice(0, 6)).toEqual(source.events.slice(0, 6))
    expect(child.events[6]).toEqual({ type: 'session/end-seed', seq: 6, time: expect.any(Number), data: {} })
    expect(child.seq).toBe(7)
    expect(child.lastTurn()).toBe(1)
    expect(child.deriveMessages().map((message) => message.id)).toEqual(['u1', 'a1'])
    const stored = await storage.load(child.id)
    expect(stored.header.parent).toEqual({ sessionId: 'parent', seedLength: 6 })
    expect(stored.events).toEqual(child.events)
    completedTurn(child, 2)
    expect(child.lastTurn()).toBe(2)
    expect(source.seq).toBe(12)
  })

  test('a fork at 0 is an empty seed plus session/end-seed', async () => {
    const app = await mountSessions()
    const source = await app.sessions.create()
    completedTurn(source, 1)
    const child = await app.sessions.fork(source, 0)
    expect(types(child.events)).toEqual(['session/end-seed'])
  })

  test('a boundary inside an open turn or out of range is refused with INVALID_FORK', async () => {
    const app = await mountSessions()
    const source = await app.sessions.create({ id: SessionId('p') })
    completedTurn(source, 1)
    expect(await rejection(app.sessions.fork(source, 3))).toEqual({
      code: 'INVALID_FORK',
      message:
        'cannot fork session p at seq 3: turn 1 (opened at seq 1) is still open there; fork between turns',
    })
    expect(await rejection(app.sessions.fork(source, 7))).toEqual({
      code: 'INVALID_FORK',
      message: 'cannot fork session p at seq 7: the boundary must be an integer from 0 to 6',
    })
    expect(await rejection(app.sessions.fork(source, 1.5))).toEqual({
      code: 'INVALID_FORK',
      message: 'cannot fork session p at seq 1.5: the boundary must be an integer from 0 to 6',
    })
    expect((await app.sessions.list()).sessions.length).toBe(1)
  })
})

describe('a clean-up that fails after a failure keeps both errors (issue 31 item 3)', () => {
  /** A backend whose appends, loads and releases fail while the switches say so. */
  class Failing extends MemoryStorage {
    failAppend = false
    failLoad = false
    failRelease = false
    override async appendBatch(id: SessionId, events: readonly SessionEvent[], seq: number): Promise<void> {
      if (this.failAppend) throw Object.assign(new Error('EIO: the append failed'), { code: 'EIO' })
      return super.appendBatch(id, events, seq)
    }
    override async load(id: SessionId) {
      if (this.failLoad) throw Object.assign(new Error('EIO: the load failed'), { code: 'EIO' })
      return super.load(id)
    }
    override async release(id: SessionId): Promise<void> {
      await super.release(id)
      if (this.failRelease) throw Object.assign(new Error('EBUSY: the release failed'), { code: 'EBUSY' })
    }
  }

  test('close: a failed flush followed by a failed release rejects CLOSE_FAILED whose cause holds both, in order', async () => {
    const storage = new Failing()
    const app = await mountSessions({ storage })
    const session = await app.sessions.create({ id: SessionId('both') })
    storage.failAppend = true
    storage.failRelease = true
    session.append('user/message', user('hi'))
    const error = await app.sessions.close(session).then(
      () => new Error('expected a rejection'),
      (e: unknown) => e as Error,
    )
    expect(error).toMatchObject({ code: 'CLOSE_FAILED' })
    expect(error.cause).toBeInstanceOf(AggregateError)
    const [first, second] = (error.cause as AggregateError).errors as Error[]
    expect(first).toMatchObject({ code: 'STORAGE', cause: { code: 'EIO' } })
    expect(second).toMatchObject({ code: 'EBUSY', message: 'EBUSY: the release failed' })
  })

  test('open: a failed load followed by a failed release rejects with the load’s error, the release’s beside it', async () => {
    const storage = new Failing()
    const app = await mountSessions({ storage })
    await app.sessions.close(await app.sessions.create({ id: SessionId('reopen') }))
    storage.failLoad = true
    storage.failRelease = true
    const error = await app.sessions.open(SessionId('reopen')).then(
      () => new Error('expected a rejection'),
      (e: unknown) => e as Error,
    )
    expect(error.cause).toBeInstanceOf(AggregateError)
    const [first, second] = (error.cause as AggregateError).errors as Error[]
    expect(first).toMatchObject({ code: 'EIO', message: 'EIO: the load failed' })
    expect(second).toMatchObject({ code: 'EBUSY' })
    expect(error.message).toContain('EIO: the load failed')
  })
})
