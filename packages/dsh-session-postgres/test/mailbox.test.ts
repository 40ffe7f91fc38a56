/**
 * The primitives a host above this package builds on, without a host: refusing sends before
 * acceptance, finding claimable sessions, and hearing the mailbox's NOTIFY (with its reconnect).
 */
import { SessionId, userText } from 'dsh-llm'
import { claimableSessions, Mailbox, MailboxListener, PgSessionErrorCode } from 'dsh-session-postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failure, header, type TestDatabase, testDatabase } from './support.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await testDatabase()
})
afterAll(async () => {
  await db.drop()
})

const NEVER = 3_600_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

describe('sends', () => {
  it('refuses a send to an unknown session or of a duplicate id before accepting it', async () => {
    const mailbox = new Mailbox(db.pool)
    const message = userText('hello')
    expect(await failure(mailbox.send(SessionId('nobody'), message))).toEqual({
      name: 'PgSessionError',
      code: PgSessionErrorCode.SEND_REFUSED,
      message: `session nobody: send of message ${message.id} refused: no such session`,
    })
    await mailbox.createSession(SessionId('x4'))
    await mailbox.send(SessionId('x4'), message, { wakeup: false })
    expect(await failure(mailbox.send(SessionId('x4'), message))).toMatchObject({
      code: PgSessionErrorCode.SEND_REFUSED,
      message: `session x4: send of message ${message.id} refused: a message with this id was already sent to it`,
    })
  })
})

describe('claimableSessions', () => {
  it('lists sessions with work and no live holder: pending mail, an expired holder, a wants-host release', async () => {
    const mailbox = new Mailbox(db.pool)
    const live = await db.storage({ owner: 'live', leaseTtlMs: NEVER, renewEveryMs: NEVER })
    const dying = await db.storage({ owner: 'dying', leaseTtlMs: 200, renewEveryMs: NEVER })
    // Free, nothing waiting: not claimable. Free with mail: claimable.
    await mailbox.createSession(SessionId('c-idle'))
    await mailbox.createSession(SessionId('c-mail'))
    await mailbox.send(SessionId('c-mail'), userText('work'))
    // Mail for a session a live host holds: that host delivers it, nobody claims it.
    await live.create(header('c-held'))
    await mailbox.send(SessionId('c-held'), userText('work'))
    // Released with queued inbox work: claimable; released with nothing queued: not.
    await live.create(header('c-wants'))
    live.markWantsHost(SessionId('c-wants'))
    await live.release(SessionId('c-wants'))
    await live.create(header('c-done'))
    await live.release(SessionId('c-done'))
    // Held by a host that stopped renewing: claimable once its lease expired.
    await dying.create(header('c-expired'))
    const mine = (ids: readonly SessionId[]) => ids.filter((id) => id.startsWith('c-')).sort()
    expect(mine(await claimableSessions(db.pool, 10, []))).toEqual(['c-mail', 'c-wants'])
    await sleep(300)
    expect(mine(await claimableSessions(db.pool, 10, []))).toEqual(['c-expired', 'c-mail', 'c-wants'])
    expect(mine(await claimableSessions(db.pool, 10, ['c-mail', 'x4']))).toEqual(['c-expired', 'c-wants'])
    const one = await claimableSessions(db.pool, 1, ['x4'])
    expect(one).toHaveLength(1)
    expect(['c-expired', 'c-mail', 'c-wants']).toContain(one[0])
    expect(await claimableSessions(db.pool, 0, [])).toEqual([])
  })
})

describe('MailboxListener', () => {
  it('hears every accepted send and inject, reconnects after its connection is killed, and stops', async () => {
    const mailbox = new Mailbox(db.pool)
    await mailbox.createSession(SessionId('l-1'))
    await mailbox.createSession(SessionId('l-2'))
    const heard: string[] = []
    const listener = new MailboxListener(
      db.pool,
      (sessionId) => heard.push(`notify ${sessionId}`),
      () => heard.push('reconnected'),
      50,
    )
    await listener.start()
    await mailbox.send(SessionId('l-1'), userText('one'))
    await mailbox.inject(SessionId('l-2'), userText('two'))
    await until('two notifications', () => (heard.length >= 2 ? true : undefined))
    // The server ends the LISTEN connection (a restart, a failover, an admin): the listener comes back.
    const killed = await db.pool.query(
      `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
       WHERE datname = current_database() AND query = 'LISTEN dsh_mailbox'`,
    )
    expect(killed.rows).toEqual([{ killed: true }])
    await until('the reconnect', () => (heard.includes('reconnected') ? true : undefined))
    await mailbox.send(SessionId('l-1'), userText('three'))
    await until('the third notification', () => (heard.length >= 4 ? true : undefined))
    await listener.stop()
    await mailbox.send(SessionId('l-2'), userText('four'))
    await sleep(200)
    expect(heard).toEqual(['notify l-1', 'notify l-2', 'reconnected', 'notify l-1'])
  })
})
