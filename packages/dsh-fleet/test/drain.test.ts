/**
 * Draining a host hands its running turn on: nothing is killed, the drained host cuts the turn at a
 * safe point and flags the session, and another host of the fleet continues the work — the same
 * outcome as a crash, without the crash and without waiting for a lease to expire.
 */

import type { FleetHost, FleetHostEvent } from 'dsh-fleet'
import { type SessionId, SessionId as sessionId, userText } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'
import { Mailbox, type PostgresStorage } from 'dsh-session-postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { stored, type TestDatabase, testDatabase } from '../../dsh-session-postgres/test/support.ts'
import { startHost } from './fixtures/host-app.mjs'

let db: TestDatabase
const hosts: { name: string; fleet: FleetHost; storage: PostgresStorage; events: FleetHostEvent[] }[] = []
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}

/** The `work` results a log holds, as `<i>:ok` or `<i>:error`, in log order. */
function workResults(log: readonly SessionEvent[]): string[] {
  const calls = new Map<string, number>()
  const out: string[] = []
  for (const event of log) {
    if (event.type === 'assistant/message') {
      for (const block of event.data.message.content) {
        if (block.type === 'tool-call') calls.set(block.id, (JSON.parse(block.arguments) as { i: number }).i)
      }
    }
    if (event.type === 'tool/result') {
      for (const block of event.data.message.content) {
        if (block.type !== 'tool-result') continue
        out.push(`${calls.get(block.toolCallId)}:${block.isError === true ? 'error' : 'ok'}`)
      }
    }
  }
  return out
}

describe('draining a host', () => {
  it('hands a running turn to another host of three: the work goes on, nothing lost or repeated', async () => {
    const id: SessionId = sessionId('drain-1')
    const mailbox = new Mailbox(db.pool)
    await mailbox.createSession(id)
    for (const name of ['host-a', 'host-b', 'host-c']) {
      const events: FleetHostEvent[] = []
      const started = await startHost({
        url: db.url,
        owner: name,
        modelDelayMs: 40,
        workDelayMs: 40,
        onEvent: (event) => events.push(event),
      })
      hosts.push({ name, ...started, events })
    }
    await mailbox.send(id, userText('task:drain-1:6'))
    // The holder, once two units of work are logged: mid-turn.
    const holder = await until('a host to run two units of work', async () => {
      const running = hosts.find((host) => host.fleet.sessions().includes(id))
      if (running === undefined) return undefined
      return workResults(await stored(running.storage, id)).length >= 2 ? running : undefined
    })
    await holder.fleet.drain(0)
    expect(holder.events.filter((event) => event.type === 'error')).toEqual([])
    const lease = await db.pool.query('SELECT owner, wants_host FROM dsh_leases WHERE session_id = $1', [id])
    // Another host may already have claimed it; the flag (or that claim) is what hands it on.
    expect(lease.rows[0]?.owner === null ? lease.rows[0]?.wants_host : true).toBe(true)

    const others = hosts.filter((host) => host !== holder)
    const log = await until('another host to finish the task', async () => {
      const all = await stored(holder.storage, id)
      const last = all[all.length - 1]
      const done = all.some(
        (e) => e.type === 'assistant/message' && JSON.stringify(e.data).includes('"done drain-1"'),
      )
      return done && last?.type === 'turn/end' && others.every((h) => h.fleet.sessions().length === 0)
        ? all
        : undefined
    })
    // The drained turn ended at a safe point, and the next turn was started by the fleet's note on
    // another host (claimed without waiting for a lease to expire).
    const turns = log
      .filter((event) => event.type === 'turn/end')
      .map((event) => (event.type === 'turn/end' ? event.data.reason : undefined))
    expect(turns).toEqual([{ kind: 'aborted', cause: 'host draining' }, { kind: 'completed' }])
    const notes = log.filter(
      (event) =>
        event.type === 'user/message' &&
        event.data.source.kind === 'plugin' &&
        event.data.source.plugin === 'dsh-fleet',
    )
    expect(notes).toHaveLength(1)
    const claimedBy = others.filter((host) =>
      host.events.some((event) => event.type === 'claimed' && event.sessionId === id),
    )
    expect(claimedBy).toHaveLength(1)
    // Every unit of work succeeded exactly once, in order; a unit cut by the drain is an error
    // result (never a success), and the model re-asks it.
    const ok = workResults(log).filter((result) => result.endsWith(':ok'))
    expect(ok).toEqual(['0:ok', '1:ok', '2:ok', '3:ok', '4:ok', '5:ok'])
    const pending = await db.pool.query(
      'SELECT count(*)::int AS n FROM dsh_mailbox WHERE delivered_seq IS NULL AND refused IS NULL',
    )
    expect(pending.rows[0]?.n).toBe(0)
  }, 30_000)

  it('a host that lost its lease stops the session quietly: one `lost` notice, nothing on stderr', async () => {
    const id: SessionId = sessionId('lost-1')
    const mailbox = new Mailbox(db.pool)
    await mailbox.createSession(id)
    const written: string[] = []
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk))
      return true
    })
    try {
      const events: FleetHostEvent[] = []
      const stale = await startHost({
        url: db.url,
        owner: 'host-stale',
        leaseTtlMs: 300,
        renewEveryMs: 3_600_000,
        modelDelayMs: 1500,
        onEvent: (event) => events.push(event),
      })
      hosts.push({ name: 'host-stale', ...stale, events })
      await mailbox.send(id, userText('task:lost-1:1'))
      await until('host-stale to hold the session', async () =>
        stale.fleet.sessions().includes(id) ? true : undefined,
      )
      // Its lease lapses unrenewed while its model call is in flight; another host takes over.
      await sleep(450)
      const takerEvents: FleetHostEvent[] = []
      const taker = await startHost({ url: db.url, owner: 'host-taker', onEvent: (e) => takerEvents.push(e) })
      hosts.push({ name: 'host-taker', ...taker, events: takerEvents })
      await until('host-stale to notice the loss and stop', async () =>
        events.some((event) => event.type === 'lost') && stale.fleet.sessions().length === 0
          ? true
          : undefined,
      )
      // Its model call returns and finds the session gone: still quiet.
      await sleep(1500)
      expect(events.map((event) => `${event.type} ${event.sessionId ?? ''}`)).toEqual([
        `claimed ${id}`,
        `lost ${id}`,
      ])
      expect(written.filter((line) => line.includes('dsh'))).toEqual([])
    } finally {
      stderr.mockRestore()
    }
  }, 30_000)
})

describe('the order mail lands in the log', () => {
  it('logs sends in acceptance order and injects in acceptance order, each exactly once', async () => {
    const id: SessionId = sessionId('order-1')
    const mailbox = new Mailbox(db.pool)
    await mailbox.createSession(id)
    const started = await startHost({ url: db.url, owner: 'host-order', modelDelayMs: 150 })
    hosts.push({ name: 'host-order', ...started, events: [] })
    await mailbox.send(id, userText('task:order-1:3'))
    await until('the host to run the task', async () =>
      started.fleet.sessions().includes(id) ? true : undefined,
    )
    // Accepted in this order, mixing the two kinds, while the turn runs.
    const accepted: { kind: 'send' | 'inject'; messageId: string }[] = []
    for (let i = 0; i < 4; i++) {
      const inject = await mailbox.inject(id, userText(`inject ${i}`))
      accepted.push({ kind: 'inject', messageId: inject.messageId })
      const send = await mailbox.send(id, userText(`send ${i}`), { target: 'next-step' })
      accepted.push({ kind: 'send', messageId: send.messageId })
    }
    const log = await until('every message to be logged', async () => {
      const all = await stored(started.storage, id)
      const logged = new Set(loggedMail(all))
      return accepted.every((a) => logged.has(a.messageId)) && started.fleet.sessions().length === 0
        ? all
        : undefined
    })
    const order = loggedMail(log)
    for (const kind of ['send', 'inject'] as const) {
      const ids = accepted.filter((a) => a.kind === kind).map((a) => a.messageId)
      expect(order.filter((messageId) => ids.includes(messageId))).toEqual(ids)
    }
    expect(order).toHaveLength(new Set(order).size)
  }, 30_000)
})

/**
 * Message ids of mail where the log first records it: a send at its inbox splice (its later
 * `user/message`, when a turn claims it, is not a second delivery), an inject at its `user/message`.
 */
function loggedMail(log: readonly SessionEvent[]): string[] {
  const out: string[] = []
  for (const event of log) {
    if (event.type === 'agent/inbox/spliced') for (const message of event.data.inserted) out.push(message.id)
    if (event.type === 'user/message' && event.data.source.kind === 'user' && !out.includes(event.data.id)) {
      out.push(event.data.id)
    }
  }
  return out
}
