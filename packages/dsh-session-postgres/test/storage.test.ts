import { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode } from 'dsh-session'
import {
  appendFenced,
  checkSchema,
  Mailbox,
  migrate,
  PgSessionErrorCode,
  PostgresStorage,
  SCHEMA_VERSION,
} from 'dsh-session-postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createDatabase,
  dropDatabase,
  failure,
  header,
  stored,
  type TestDatabase,
  testDatabase,
  urlOf,
  userEvent,
  userEvents,
} from './support.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await testDatabase()
})
afterAll(async () => {
  await db.drop()
})

describe('migration', () => {
  it('refuses to start on a database that was never migrated, then migrates once', async () => {
    const name = await createDatabase()
    const pool = new pg.Pool({ connectionString: urlOf(name), max: 2 })
    try {
      expect(await failure(PostgresStorage.connect({ pool }))).toEqual({
        name: 'PgSessionError',
        code: PgSessionErrorCode.SCHEMA_OUT_OF_DATE,
        message: `the dsh session schema is at version 0, this code needs ${SCHEMA_VERSION}: call migrate(pool) first`,
      })
      const [first, second] = await Promise.all([migrate(pool), migrate(pool)])
      expect([...(first ?? []), ...(second ?? [])]).toEqual([1])
      expect(await migrate(pool)).toEqual([])
      await checkSchema(pool)
    } finally {
      await pool.end()
      await dropDatabase(name)
    }
  })

  it('refuses a schema newer than the code', async () => {
    await db.pool.query('INSERT INTO dsh_schema_version (version) VALUES ($1)', [SCHEMA_VERSION + 1])
    try {
      expect(await failure(checkSchema(db.pool))).toEqual({
        name: 'PgSessionError',
        code: PgSessionErrorCode.SCHEMA_TOO_NEW,
        message: `the dsh session schema is at version ${SCHEMA_VERSION + 1}, newer than this code's ${SCHEMA_VERSION}`,
      })
    } finally {
      await db.pool.query('DELETE FROM dsh_schema_version WHERE version = $1', [SCHEMA_VERSION + 1])
    }
  })
})

describe('appends', () => {
  it('stores a batch and loads it back exactly', async () => {
    const storage = await db.storage()
    await storage.create(header('a1'))
    const events = [userEvent(0, 'quote " back\\slash \u0000 nul'), userEvent(1, '\ud800 lone'), userEvent(2)]
    await storage.appendBatch(SessionId('a1'), events, 0)
    const loaded = await storage.load(SessionId('a1'))
    expect(loaded.header).toEqual(header('a1'))
    expect(loaded.events).toEqual(events)
    expect(loaded.report).toEqual({ repairedEvents: 0 })
    expect(Object.isFrozen(loaded.events[0]?.data)).toBe(true)
  })

  it('refuses a batch at the wrong seq with SEQ_MISMATCH and writes nothing', async () => {
    const storage = await db.storage()
    await storage.create(header('a2'))
    await storage.appendBatch(SessionId('a2'), userEvents(0, 2), 0)
    expect(
      await failure(storage.appendBatch(SessionId('a2'), [userEvent(1, 'other'), userEvent(2)], 1)),
    ).toEqual({
      name: 'SessionError',
      code: SessionErrorCode.SEQ_MISMATCH,
      message: 'session a2: batch expected at seq 1 but the next seq is 2',
    })
    expect(await failure(storage.appendBatch(SessionId('a2'), userEvents(3, 1), 3))).toEqual({
      name: 'SessionError',
      code: SessionErrorCode.SEQ_MISMATCH,
      message: 'session a2: batch expected at seq 3 but the next seq is 2',
    })
    expect(await failure(storage.appendBatch(SessionId('a2'), [userEvent(2), userEvent(4)], 2))).toEqual({
      name: 'SessionError',
      code: SessionErrorCode.SEQ_MISMATCH,
      message: 'session a2: batch event 1 (user/message) has seq 4, expected 3',
    })
    expect((await stored(storage, 'a2')).map((event) => event.seq)).toEqual([0, 1])
  })

  it('lets exactly one of many racing appends at the same seq through: no duplicate, no gap', async () => {
    const storage = await db.storage({ poolSize: 8 })
    await storage.create(header('a3'))
    const racers = Array.from({ length: 8 }, (_, i) => [
      userEvent(0, `racer ${i}`),
      userEvent(1, `racer ${i}`),
    ])
    const outcomes = await Promise.allSettled(
      racers.map((batch) => storage.appendBatch(SessionId('a3'), batch, 0)),
    )
    const won = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [i] : []))
    expect(won).toHaveLength(1)
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        expect(outcome.reason).toBeInstanceOf(SessionError)
        expect((outcome.reason as SessionError).code).toBe(SessionErrorCode.SEQ_MISMATCH)
      }
    }
    expect(await stored(storage, 'a3')).toEqual(racers[won[0] ?? -1])
  })

  it('refuses an append without the lease with LOCKED', async () => {
    const writer = await db.storage()
    const other = await db.storage()
    await writer.create(header('a4'))
    expect(await failure(other.appendBatch(SessionId('a4'), userEvents(0, 1), 0))).toEqual({
      name: 'SessionError',
      code: SessionErrorCode.LOCKED,
      message: 'session a4: append at seq 0 without holding the write lease; create or acquire it first',
    })
  })

  it('inserts nothing for a session that has no row, though dsh_events has no foreign key', async () => {
    // The fenced statement inserts only through its head UPDATE of the session row; the events
    // table carries no foreign key (its per-row check cost a third of the append).
    expect(await failure(appendFenced(db.pool, SessionId('ghost'), '1', userEvents(0, 3), 0))).toEqual({
      name: 'SessionError',
      code: SessionErrorCode.NOT_FOUND,
      message: 'no stored session ghost',
    })
    const rows = await db.pool.query("SELECT count(*)::int AS n FROM dsh_events WHERE session_id = 'ghost'")
    expect(rows.rows).toEqual([{ n: 0 }])
    const fks = await db.pool.query(
      "SELECT conname FROM pg_constraint WHERE conrelid = 'dsh_events'::regclass AND contype = 'f'",
    )
    expect(fks.rows).toEqual([])
  })

  it('refuses to create an existing id or another format version', async () => {
    const storage = await db.storage()
    await storage.create(header('a5'))
    expect(await failure(storage.create(header('a5')))).toMatchObject({
      code: SessionErrorCode.ALREADY_EXISTS,
      message: 'session a5 already exists',
    })
    expect(await failure(storage.create({ ...header('a6'), version: 99 }))).toMatchObject({
      code: SessionErrorCode.UNSUPPORTED_VERSION,
    })
  })
})

describe('reads', () => {
  it('loads a session larger than a page in order, and reads from a seq', async () => {
    const storage = await db.storage({ pageSize: 7 })
    await storage.create(header('r1'))
    await storage.appendBatch(SessionId('r1'), userEvents(0, 30), 0)
    const loaded = await storage.load(SessionId('r1'))
    expect(loaded.events.map((event) => event.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i))
    const tail: number[] = []
    for await (const event of storage.read(SessionId('r1'), 25)) tail.push(event.seq)
    expect(tail).toEqual([25, 26, 27, 28, 29])
  })

  it('fails to load an unknown session with NOT_FOUND', async () => {
    const storage = await db.storage()
    expect(await failure(storage.load(SessionId('nope')))).toEqual({
      name: 'SessionError',
      code: SessionErrorCode.NOT_FOUND,
      message: 'no stored session nope',
    })
  })

  it('refuses a stored event of an unknown type, naming session and seq', async () => {
    const storage = await db.storage()
    await storage.create(header('r2'))
    await storage.appendBatch(SessionId('r2'), userEvents(0, 1), 0)
    await db.pool.query(
      `INSERT INTO dsh_events (session_id, seq, type, body) VALUES ('r2', 1, 'x/y', '{"type":"x/y","seq":1,"time":1,"data":{}}')`,
    )
    expect(await failure(storage.load(SessionId('r2')))).toMatchObject({
      code: SessionErrorCode.UNKNOWN_EVENT_TYPE,
      message: expect.stringMatching(/^session r2 seq 1: /),
    })
  })

  it('lists every header in pages, oldest first', async () => {
    const name = await createDatabase()
    const pool = new pg.Pool({ connectionString: urlOf(name), max: 2 })
    await migrate(pool)
    const storage = await PostgresStorage.connect({ pool, pageSize: 3 })
    try {
      const ids = Array.from({ length: 8 }, (_, i) => `l${i}`)
      for (const [i, id] of ids.entries()) await storage.create(header(id, 1000 + (i % 3)))
      const expected = [...ids].sort(
        (a, b) => (Number(a.slice(1)) % 3) - (Number(b.slice(1)) % 3) || (a < b ? -1 : 1),
      )
      const first = await storage.listPage()
      expect(first.sessions.map((h) => h.sessionId)).toEqual(expected.slice(0, 3))
      expect((await storage.list()).sessions.map((h) => h.sessionId)).toEqual(expected)
    } finally {
      await storage.close()
      await pool.end()
      await dropDatabase(name)
    }
  })
})

describe('connections the server ends', () => {
  it("survives the server ending the idle connections of the caller's pool: the next append reconnects", async () => {
    const name = await createDatabase()
    // The caller's pool, as the README builds it: no `error` listener of its own.
    const pool = new pg.Pool({ connectionString: urlOf(name), max: 2 })
    await migrate(pool)
    const storage = await PostgresStorage.connect({ pool })
    const mailbox = new Mailbox(pool)
    try {
      await storage.create(header('t1'))
      await storage.appendBatch(SessionId('t1'), userEvents(0, 1), 0)
      await mailbox.createSession(SessionId('t2'))
      expect(pool.idleCount).toBeGreaterThan(0)
      // A restart or an administrator ends every connection to the database. pg hands the error of
      // an idle client to its pool; a pool with no listener would throw it out of the socket handler.
      const admin = new pg.Client({ connectionString: urlOf(name) })
      await admin.connect()
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      )
      await admin.end()
      for (let i = 0; i < 200 && pool.totalCount > 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 10))
      expect(pool.totalCount).toBe(0)
      await storage.appendBatch(SessionId('t1'), userEvents(1, 1), 1)
      expect((await storage.load(SessionId('t1'))).events.map((event) => event.seq)).toEqual([0, 1])
    } finally {
      await storage.close()
      await pool.end()
      await dropDatabase(name)
    }
  })
})
