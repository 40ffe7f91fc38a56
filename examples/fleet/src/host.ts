/**
 * One host of a fleet. Run as many as you like against one database:
 *   DATABASE_URL=postgres://... node dist/host.js
 * It migrates the schema (idempotent), claims sessions with pending work, and on SIGTERM or SIGINT
 * drains: running turns get `DSH_DRAIN_MS` (default 10 s) to finish, the rest are cancelled with
 * their inbox kept, and every lease is released for the other hosts.
 */
import { Context } from 'cordis'
import AgentLoop, { ToolRegistry } from 'dsh-agent-loop'
import { FleetHost } from 'dsh-fleet'
import { LlmRuntime } from 'dsh-llm'
import { Sessions } from 'dsh-session'
import { migrate, PostgresStorage } from 'dsh-session-postgres'
import pg from 'pg'
import { z } from 'zod'
import { chooseModel } from './model.ts'

const url = process.env.DATABASE_URL
if (url === undefined || url === '') throw new Error('set DATABASE_URL to the fleet database')
const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DSH_POOL_SIZE ?? 10) })
await migrate(pool)
const storage = await PostgresStorage.connect({
  pool,
  leaseTtlMs: Number(process.env.DSH_LEASE_TTL_MS ?? 30_000),
})

const app = new Context()
await app.plugin(LlmRuntime)
await app.plugin(Sessions, { storage })
await app.plugin(ToolRegistry)
await app.plugin(AgentLoop)
const model = chooseModel()
app.llm.registerAdapter(model.provider, model.adapter)
app.tools.register({
  name: 'clock',
  description: 'The current time as an ISO 8601 string.',
  parameters: z.object({}),
  execute: () => new Date().toISOString(),
})

const host = await FleetHost.start({
  ctx: app,
  storage,
  agent: { provider: model.provider, model: model.model, system: 'You are one agent of a fleet.' },
  onEvent: (event) => {
    const where = 'sessionId' in event && event.sessionId !== undefined ? ` ${event.sessionId}` : ''
    const why = 'error' in event ? `: ${String(event.error)}` : ''
    console.log(`[${storage.owner}] ${event.type}${where}${why}`)
  },
})
console.log(`[${storage.owner}] running; model ${model.provider}/${model.model}`)

let stopping = false
async function stop(signal: string): Promise<void> {
  if (stopping) return
  stopping = true
  console.log(`[${storage.owner}] ${signal}: draining`)
  await host.drain(Number(process.env.DSH_DRAIN_MS ?? 10_000))
  await storage.close()
  await pool.end()
  process.exit(0)
}
process.on('SIGTERM', () => void stop('SIGTERM'))
process.on('SIGINT', () => void stop('SIGINT'))
