import { checkSessionLog, reconstructRequests } from 'dsh-invariants'
import { SessionId, userText } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'
import { Mailbox, type PostgresStorage } from 'dsh-session-postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stored, type TestDatabase, testDatabase } from '../../dsh-session-postgres/test/support.ts'
import { assertBuilt, type Fact, type HostProcess, startHostProcess, until } from './fleet-support.ts'

// The host processes run the built packages (dist/); `pnpm test` builds before running vitest.
// DSH_FLEET_LONG=1 runs the long version: more sessions, more work, and a kill/pause every round.
const LONG = process.env.DSH_FLEET_LONG === '1'
const SESSIONS = LONG ? 120 : 30
const CALLS = LONG ? 6 : 4
const ROUNDS = LONG ? 4 : 1
const TTL = 1000

let db: TestDatabase
let storage: PostgresStorage
const hosts: HostProcess[] = []
beforeAll(async () => {
  await assertBuilt()
  db = await testDatabase()
  storage = await db.storage()
})
afterAll(async () => {
  const dump = process.env.DSH_FLEET_DUMP
  if (dump !== undefined && dump !== '') {
    const { writeFileSync } = await import('node:fs')
    writeFileSync(
      dump,
      facts()
        .map((fact) => JSON.stringify(fact))
        .join('\n'),
    )
  }
  for (const host of hosts) if (host.child.exitCode === null) host.child.kill('SIGKILL')
  // Undefined when the build check refused to start.
  await (db as TestDatabase | undefined)?.drop()
})

const ids = Array.from({ length: SESSIONS }, (_, i) => `fleet-${i}`)

function finished(log: readonly SessionEvent[]): boolean {
  const last = log[log.length - 1]
  return last?.type === 'turn/end' && last.data.reason.kind === 'completed'
}

/** Whether the model reported round `round`'s task of session `id` done (after all its work). */
function taskDone(log: readonly SessionEvent[], id: string, round: number): boolean {
  const text = `done ${id}-r${round}`
  return log.some(
    (event) =>
      event.type === 'assistant/message' &&
      event.data.message.content.some((block) => block.type === 'text' && block.text === text),
  )
}

/** What `allDone` last found still pending, for the timeout's message. */
let blocker = ''

async function allDone(round: number): Promise<boolean> {
  const pending = await db.pool.query(
    'SELECT session_id, count(*)::int AS n FROM dsh_mailbox WHERE delivered_seq IS NULL AND refused IS NULL GROUP BY session_id',
  )
  if (pending.rows.length > 0) {
    blocker = `undelivered mail: ${JSON.stringify(pending.rows)}`
    return false
  }
  const held = await db.pool.query(
    'SELECT session_id, owner, wants_host FROM dsh_leases WHERE owner IS NOT NULL OR wants_host',
  )
  if (held.rows.length > 0) {
    blocker = `leases held: ${JSON.stringify(held.rows)}`
    return false
  }
  for (const id of ids) {
    const log = await stored(storage, id)
    if (!finished(log) || !taskDone(log, id, round)) {
      const tail = log
        .slice(-40)
        .filter((event) => event.type !== 'assistant/chunk')
        .map((event) => `${event.seq} ${event.type} ${JSON.stringify(event.data).slice(0, 300)}`)
      blocker = `session ${id} not done with round ${round}; its log ends:\n${tail.join('\n')}`
      return false
    }
  }
  return true
}

function facts(): Fact[] {
  return hosts.flatMap((host) => host.facts)
}

/** A host that holds sessions and has acknowledged appends in the last moments: it is mid-turn. */
async function busyHost(candidates: HostProcess[]): Promise<{ host: HostProcess; held: string[] }> {
  return until(
    'a host in the middle of turns',
    () => {
      for (const host of candidates) {
        const held = new Set<string>()
        for (const fact of host.facts) {
          if (fact.t === 'claimed' && fact.id !== undefined) held.add(fact.id)
          if ((fact.t === 'released' || fact.t === 'lost') && fact.id !== undefined) held.delete(fact.id)
        }
        const recent = host.facts.slice(-20).filter((fact) => fact.t === 'ack')
        if (held.size > 0 && recent.length >= 5) return { host, held: [...held] }
      }
      return undefined
    },
    15_000,
  )
}

describe('a fleet of three host processes', () => {
  it(
    `finishes ${SESSIONS} sessions with tool calls and cross-host sends through a SIGKILL and a SIGSTOP past the lease TTL`,
    async () => {
      const mailbox = new Mailbox(db.pool)
      for (const id of ids) await mailbox.createSession(SessionId(id))
      let next = 0
      const spawnHost = async () => {
        const host = await startHostProcess(`host-${next++}`, db.url, TTL, ids)
        hosts.push(host)
        return host
      }
      await Promise.all([spawnHost(), spawnHost(), spawnHost()])
      const tasks = new Map<string, string>()
      const paused: {
        host: HostProcess
        held: string[]
        lost: string[]
        pausedAt: number
        resumedAt: number
      }[] = []
      for (let round = 0; round < ROUNDS; round++) {
        // Each round gives every session a new task, kills one host and pauses another mid-work.
        for (const id of ids) {
          const accepted = await mailbox.send(SessionId(id), userText(`task:${id}-r${round}:${CALLS}`))
          tasks.set(accepted.messageId, id)
        }
        const alive = () =>
          hosts.filter((host) => host.child.exitCode === null && host.child.signalCode === null)
        // SIGKILL one host mid-turn, and start a replacement so three keep running.
        const victim = await busyHost(alive())
        victim.host.child.kill('SIGKILL')
        await victim.host.exited
        await spawnHost()
        // SIGSTOP another mid-turn, past its lease TTL, until other hosts have taken its sessions.
        const sleeper = await busyHost(alive().filter((host) => host !== victim.host))
        sleeper.host.child.kill('SIGSTOP')
        const pausedAt = Date.now()
        const takenOver = () =>
          sleeper.held.filter((id) =>
            facts().some(
              (fact) =>
                fact.t === 'claimed' &&
                fact.id === id &&
                fact.host !== sleeper.host.name &&
                fact.recv > pausedAt,
            ),
          )
        await until(
          `another host to take over ${sleeper.host.name}'s sessions`,
          () => (takenOver().length > 0 ? true : undefined),
          TTL * 10,
        )
        // Give the other held sessions time to be taken too, then wake the sleeper.
        await new Promise((resolve) => setTimeout(resolve, 300))
        paused.push({ ...sleeper, lost: takenOver(), pausedAt, resumedAt: sleeper.host.facts.length })
        sleeper.host.child.kill('SIGCONT')
        await until(
          `every session to finish round ${round} and every lease to be free`,
          async () => (await allDone(round)) || undefined,
          LONG ? 120_000 : 45_000,
        ).catch((error: unknown) => {
          throw new Error(
            `${error instanceof Error ? error.message : String(error)} (still pending: ${blocker})`,
          )
        })
      }

      // Every acknowledged append is in the log, exactly as acknowledged, and tokens never go back.
      const logs = new Map<string, SessionEvent[]>()
      for (const id of ids) logs.set(id, await stored(storage, id))
      const acks = facts().filter((fact) => fact.t === 'ack')
      expect(acks.length).toBeGreaterThan(SESSIONS)
      for (const ack of acks) {
        const event = logs.get(ack.id ?? '')?.[ack.seq ?? -1]
        expect(event?.type, `${ack.host} acked ${ack.id} seq ${ack.seq}`).toBe(ack.type)
      }
      for (const id of ids) {
        const tokens = acks
          .filter((ack) => ack.id === id)
          .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))
          .map((ack) => BigInt(ack.token ?? '0'))
        expect(
          tokens.every((token, i) => i === 0 || token >= (tokens[i - 1] ?? 0n)),
          `tokens of ${id}`,
        ).toBe(true)
      }

      // The paused hosts: after SIGCONT, every append they tried on a session taken over from them was
      // refused (LEASE_LOST), and whatever they still acknowledged had landed before the takeover
      // (the token order above), so they noticed the loss and stopped those sessions.
      for (const sleeper of paused) {
        expect(sleeper.lost.length).toBeGreaterThan(0)
        // A resumed host learns of the takeover at its next append or lease renewal, which may come
        // after the other hosts have finished every session: wait for that notice, bounded.
        const noticed = () =>
          sleeper.host.facts
            .slice(sleeper.resumedAt)
            .some((fact) => fact.t === 'lost' || fact.t === 'fail') || undefined
        await until(`${sleeper.host.name} to notice the takeover after SIGCONT`, noticed, TTL * 10)
        const after = sleeper.host.facts.slice(sleeper.resumedAt)
        const refused = after.filter((fact) => fact.t === 'fail' && sleeper.lost.includes(fact.id ?? ''))
        expect(refused.map((fact) => fact.code).filter((code) => code !== 'LEASE_LOST')).toEqual([])
        for (const id of sleeper.lost) {
          // The first seq the taker of this pause wrote (acks of other hosts read after the pause).
          const takerFirst = Math.min(
            ...acks
              .filter((ack) => ack.id === id && ack.host !== sleeper.host.name && ack.recv > sleeper.pausedAt)
              .map((ack) => ack.seq ?? 0),
          )
          const late = after.filter(
            (fact) => fact.t === 'ack' && fact.id === id && (fact.seq ?? 0) >= takerFirst,
          )
          expect(
            late.filter((fact) => !reclaimedBefore(sleeper.host, fact)),
            `late acks of ${id}`,
          ).toEqual([])
        }
        expect(after.filter((fact) => fact.t === 'lost' || fact.t === 'fail').length).toBeGreaterThan(0)
      }

      // Every accepted send was delivered exactly once: tasks, and the ring's notes between hosts.
      const sent = facts().filter((fact) => fact.t === 'sent')
      expect(sent.length).toBeGreaterThanOrEqual(SESSIONS)
      const accepted = new Map<string, string>(tasks)
      for (const fact of sent) accepted.set(fact.messageId ?? '', fact.to ?? '')
      for (const [messageId, id] of accepted) {
        const inserts = (logs.get(id) ?? []).filter(
          (event) =>
            event.type === 'agent/inbox/spliced' && event.data.inserted.some((m) => m.id === messageId),
        )
        expect(inserts.length, `deliveries of ${messageId} to ${id}`).toBe(1)
      }

      // Every log passes the offline invariant checks and re-derives its requests.
      for (const [id, log] of logs) {
        expect(checkSessionLog(log), `invariants of ${id}`).toEqual([])
        expect(reconstructRequests(log).length).toBeGreaterThanOrEqual((CALLS + 1) * ROUNDS)
      }

      // SIGTERM drains: every host exits 0 and no lease stays held.
      const running = hosts.filter((host) => host.child.exitCode === null && host.child.signalCode === null)
      for (const host of running) host.child.kill('SIGTERM')
      expect(await Promise.all(running.map((host) => host.exited))).toEqual(running.map(() => 0))
      const held = await db.pool.query('SELECT count(*)::int AS n FROM dsh_leases WHERE owner IS NOT NULL')
      expect(held.rows[0]?.n).toBe(0)
    },
    LONG ? 600_000 : 90_000,
  )
})

/** Whether `host` claimed the ack's session afresh (after losing it) before acknowledging it. */
function reclaimedBefore(host: HostProcess, ack: Fact): boolean {
  const lost = host.facts.findIndex((fact) => fact.t === 'lost' && fact.id === ack.id)
  return (
    lost >= 0 &&
    host.facts.some(
      (fact) => fact.t === 'claimed' && fact.id === ack.id && fact.at > lost && fact.at < ack.at,
    )
  )
}
