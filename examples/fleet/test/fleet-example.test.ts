/**
 * The example end to end: one `dist/host.js` against a fresh database, `dist/send.js` sends a prompt,
 * the host runs the turn with its offline model, and SIGTERM drains it and releases the lease.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, expect, inject, test } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection string of a role that may create databases. */
    pgUrl: string
  }
}

const dist = fileURLToPath(new URL('../dist', import.meta.url))
const database = `dsh_t_${randomBytes(6).toString('hex')}`
let url = ''

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('pgUrl') })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  await admin((client) => client.query(`CREATE DATABASE ${database}`))
  const target = new URL(inject('pgUrl'))
  target.pathname = `/${database}`
  url = target.toString()
})

afterAll(async () => {
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
})

/** Starts `dist/<script>` with the fleet database; collects its stdout lines. */
function run(script: string, args: string[]): { child: ChildProcess; lines: string[] } {
  const child = spawn(process.execPath, [join(dist, script), ...args], {
    env: { ...process.env, DATABASE_URL: url, DSH_LEASE_TTL_MS: '5000', DSH_DRAIN_MS: '2000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines: string[] = []
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => lines.push(line))
  return { child, lines }
}

/** Polls until `probe` returns a value (every 50 ms, at most `ms`). */
async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms: number) {
  const end = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

test('a host from the example runs the turn of a prompt sent with the example sender, then drains', async () => {
  const host = run('host.js', [])
  const hostExit = once(host.child, 'exit')
  try {
    await until('the host to run', () => host.lines.find((line) => line.includes('running;')), 10_000)
    expect(host.lines.at(-1)).toMatch(/^\[.+\] running; model offline\/echo-length$/)

    const sender = run('send.js', ['ticket-1', 'What time is it?'])
    const [senderCode] = await once(sender.child, 'exit')
    expect(senderCode).toBe(0)
    expect(sender.lines).toHaveLength(2)
    expect(sender.lines[0]).toMatch(/^accepted \S+ for ticket-1 \(mailbox #1\)$/)
    expect(sender.lines[1]).toMatch(/^logged at seq \d+$/)

    const pool = new pg.Pool({ connectionString: url, max: 1 })
    pool.on('error', () => undefined)
    try {
      const events = await until(
        'the turn to end',
        async () => {
          const { rows } = await pool.query<{ seq: number; type: string; body: { data: unknown } }>(
            "SELECT seq::int AS seq, type, body FROM dsh_events WHERE session_id = 'ticket-1' ORDER BY seq",
          )
          return rows.some((row) => row.type === 'turn/end') ? rows : undefined
        },
        10_000,
      )
      const types = events.map((row) => row.type)
      expect(types.filter((type) => type !== 'assistant/chunk')).toEqual([
        'agent/inbox/spliced',
        'turn/start',
        'agent/inbox/spliced',
        'step/start',
        'user/message',
        'request/header',
        'assistant/message',
        'step/end',
        'turn/end',
      ])
      // The seq the sender reports is the append that moved its message into the session's inbox.
      const logged = events.find((row) => `logged at seq ${row.seq}` === sender.lines[1])
      expect(logged?.type).toBe('agent/inbox/spliced')
      expect(JSON.stringify(logged?.body)).toContain(sender.lines[0]?.split(' ')[1] ?? 'no message id')
      const end = events.find((row) => row.type === 'turn/end')
      expect(end?.body.data).toMatchObject({ turn: 1, reason: { kind: 'completed' } })
      expect(JSON.stringify(events.filter((row) => row.type === 'assistant/message'))).toContain(
        'received 16 characters',
      )

      host.child.kill('SIGTERM')
      const [hostCode] = await hostExit
      expect(hostCode).toBe(0)
      expect(host.lines).toContain(host.lines.find((line) => line.endsWith('SIGTERM: draining')))
      const lease = await pool.query<{ owner: string | null }>(
        "SELECT owner FROM dsh_leases WHERE session_id = 'ticket-1'",
      )
      expect(lease.rows).toEqual([{ owner: null }])
    } finally {
      await pool.end()
    }
  } finally {
    if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill('SIGKILL')
  }
}, 30_000)
