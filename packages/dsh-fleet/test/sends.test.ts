import type { FleetHost, FleetHostEvent } from 'dsh-fleet'
import { type SessionId, SessionId as sessionId, userText } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'
import { Mailbox, type PostgresStorage } from 'dsh-session-postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { stored, type TestDatabase, testDatabase } from '../../dsh-session-postgres/test/support.ts'
import { startHost } from './fixtures/host-app.mjs'

let db: TestDatabase
const hosts: { fleet: FleetHost; storage: PostgresStorage }[] = []
beforeAll(async () => {
  db = await testDatabase()
})
afterEach(async () => {
  for (const host of hosts.splice(0)) {
    await host.fleet.drain(1000)
    await host.storage.close()
  }
})
afterAll(async () => {
  await db.drop()
})

async function host(owner: string, events: FleetHostEvent[] = []) {
  const started = await startHost({ url: db.url, owner, onEvent: (event) => events.push(event) })
  hosts.push(started)
  return started
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** The texts of the user messages a log recorded as inbox inserts and user messages, in order. */
function delivered(log: readonly SessionEvent[]): string[] {
  const out: string[] = []
  for (const event of log) {
    if (event.type === 'agent/inbox/spliced')
      for (const message of event.data.inserted) out.push(`send ${message.id}`)
    if (event.type === 'user/message' && event.data.source.kind !== 'plugin')
      out.push(`user ${event.data.id}`)
  }
  return out
}

function finished(log: readonly SessionEvent[]): boolean {
  const last = log[log.length - 1]
  return last?.type === 'turn/end' && last.data.reason.kind === 'completed'
}

describe('sends across hosts', () => {
  it('delivers a send from another process to the holder, logs it once, and runs the turn', async () => {
    const mailbox = new Mailbox(db.pool)
    const id = sessionId('x1')
    await mailbox.createSession(id)
    const a = await host('host-a')
    const accepted = await mailbox.send(id, userText('task:x1:2'), { sender: 'webhook' })
    expect(accepted).toMatchObject({
      sessionId: 'x1',
      messageId: expect.any(String),
      mailboxId: expect.any(String),
    })
    const log = await until('x1 to finish', async () => {
      const events = await stored(a.storage, 'x1')
      return finished(events) ? events : undefined
    })
    const splice = log.find((event) => event.type === 'agent/inbox/spliced')
    expect(await mailbox.state(id, accepted.messageId)).toEqual({ state: 'delivered', seq: splice?.seq })
    expect(log.filter((event) => event.type === 'tool/result')).toHaveLength(2)
    expect(delivered(log).filter((entry) => entry === `send ${accepted.messageId}`)).toHaveLength(1)
  })

  it("keeps each sender's order and delivers every message exactly once while the session runs", async () => {
    const id = sessionId('x2')
    const a = await host('host-b')
    await a.fleet.mailbox.createSession(id)
    const senders = [new Mailbox(db.pool), new Mailbox(db.pool), new Mailbox(db.pool)]
    const sent: string[][] = [[], [], []]
    await Promise.all(
      senders.map(async (mailbox, s) => {
        for (let i = 0; i < 6; i++) {
          const message = userText(i === 0 && s === 0 ? 'task:x2:3' : `note ${s}.${i}`)
          const ok = await mailbox.send(id, message, { target: i % 2 === 0 ? 'next-turn' : 'next-step' })
          sent[s]?.push(ok.messageId)
        }
      }),
    )
    const log = await until('every x2 send to be logged', async () => {
      const events = await stored(a.storage, 'x2')
      const seen = delivered(events)
      return seen.length >= 18 && finished(events) && a.fleet.sessions().length === 0 ? events : undefined
    })
    const seen = delivered(log)
      .filter((entry) => entry.startsWith('send '))
      .map((entry) => entry.slice('send '.length))
    expect(new Set(seen).size).toBe(18)
    expect(seen).toHaveLength(18)
    for (const ids of sent) expect(seen.filter((messageId) => ids.includes(messageId))).toEqual(ids)
  })

  it('waits in the mailbox while no host holds the session, and is delivered on the next claim', async () => {
    const mailbox = new Mailbox(db.pool)
    const id = sessionId('x3')
    await mailbox.createSession(id)
    const first = await mailbox.send(id, userText('task:x3:1'))
    const context = await mailbox.inject(id, userText('context for x3'))
    expect(await mailbox.state(id, first.messageId)).toEqual({ state: 'pending' })
    const events: FleetHostEvent[] = []
    const a = await host('host-c', events)
    const log = await until('x3 to finish', async () => {
      const all = await stored(a.storage, 'x3')
      return finished(all) ? all : undefined
    })
    // The send opened a turn at once, so the inject waited in the outbox for the turn's first boundary.
    expect(delivered(log)).toEqual([
      `send ${first.messageId}`,
      `user ${first.messageId}`,
      `user ${context.messageId}`,
    ])
    expect(events.filter((event) => event.type === 'claimed' && event.sessionId === 'x3')).toHaveLength(1)
  })

  it('redelivers a message whose logging append was fenced, exactly once, on the new holder', async () => {
    const mailbox = new Mailbox(db.pool)
    const id = sessionId('x5') as SessionId
    await mailbox.createSession(id)
    const slowEvents: FleetHostEvent[] = []
    const slow = await startHost({
      url: db.url,
      owner: 'host-slow',
      leaseTtlMs: 300,
      renewEveryMs: 3_600_000,
      modelDelayMs: 2000,
      onEvent: (event) => slowEvents.push(event),
    })
    hosts.push(slow)
    const task = await mailbox.send(id, userText('task:x5:1'))
    await until('host-slow to hold x5', async () => (slow.fleet.sessions().includes(id) ? true : undefined))
    // The slow host's model call is in flight and its lease lapses unrenewed. It still takes the
    // note into memory, but the append that would log it is fenced once host-d has taken over.
    await sleep(450)
    const b = await host('host-d')
    await until('host-d to hold x5', async () => (b.fleet.sessions().includes(id) ? true : undefined))
    const note = await mailbox.send(id, userText('note for x5'), { target: 'next-turn' })
    const log = await until('x5 to log the note and finish on host-d', async () => {
      const all = await stored(b.storage, 'x5')
      return finished(all) && delivered(all).includes(`user ${note.messageId}`) ? all : undefined
    })
    const seen = delivered(log)
    expect(seen.filter((entry) => entry === `send ${task.messageId}`)).toHaveLength(1)
    expect(seen.filter((entry) => entry === `send ${note.messageId}`)).toHaveLength(1)
    expect(await mailbox.state(id, note.messageId)).toMatchObject({ state: 'delivered' })
    await until('host-slow to notice', async () =>
      slowEvents.some((e) => e.type === 'lost') ? true : undefined,
    )
    expect(slowEvents.filter((e) => e.type === 'lost').map((e) => e.sessionId)).toEqual(['x5'])
  }, 20_000)

  it('drains: cancels a running turn, keeps the queued work claimable, and another host runs it', async () => {
    const mailbox = new Mailbox(db.pool)
    const id = sessionId('x6')
    await mailbox.createSession(id)
    const slow = await startHost({ url: db.url, owner: 'host-draining', modelDelayMs: 3000 })
    await mailbox.send(id, userText('task:x6:1'))
    await until('host-draining to run x6', async () =>
      slow.fleet.sessions().includes(id) ? true : undefined,
    )
    const queued = await mailbox.send(id, userText('task:x6b:1'))
    await until('the queued task to be logged', async () =>
      delivered(await stored(slow.storage, 'x6')).includes(`send ${queued.messageId}`) ? true : undefined,
    )
    await slow.fleet.drain(50)
    await slow.storage.close()
    const lease = await db.pool.query('SELECT owner, wants_host FROM dsh_leases WHERE session_id = $1', [
      'x6',
    ])
    expect(lease.rows).toEqual([{ owner: null, wants_host: true }])
    const b = await host('host-after-drain')
    const log = await until('the queued task to run on host-after-drain', async () => {
      const all = await stored(b.storage, 'x6')
      return finished(all) &&
        all.some((e) => e.type === 'assistant/message' && JSON.stringify(e.data).includes('done x6b'))
        ? all
        : undefined
    })
    const ends = log.filter((event) => event.type === 'turn/end').map((event) => event.data.reason)
    expect(ends[0]).toEqual({ kind: 'aborted', cause: 'host draining' })
    expect(ends[ends.length - 1]).toEqual({ kind: 'completed' })
  }, 20_000)
})
