import type { SessionId } from 'dsh-llm'
import { SESSION_FORMAT_VERSION } from 'dsh-session'
import { describeStorageContract, type StorageContractBacking } from 'dsh-session/testing'
import { migrate, PostgresStorage } from 'dsh-session-postgres'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'
import { FaultProxy } from './fault-proxy.ts'
import { createDatabase, dropDatabase, urlOf } from './support.ts'

/** One schema per contract case, in this file's own database. */
interface SchemaBacking extends StorageContractBacking {
  readonly schema: string
  readonly admin: pg.Pool
  /** The fault proxies opened for this case, closed by `cleanup`. */
  readonly proxies: FaultProxy[]
}

let database = ''
let admin: pg.Pool
let cases = 0
beforeAll(async () => {
  database = await createDatabase()
  admin = new pg.Pool({ connectionString: urlOf(database), max: 2 })
  // Dropping the database (WITH FORCE) may end a connection the pool is still closing.
  admin.on('error', () => undefined)
})
afterAll(async () => {
  await admin.end()
  await dropDatabase(database)
})

/** A connection string whose sessions see only `schema` (search_path set at connect). */
function inSchema(schema: string): string {
  const url = new URL(urlOf(database))
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.toString()
}

describeStorageContract<SchemaBacking>(
  'PostgresStorage',
  async () => {
    const schema = `contract_${++cases}`
    await admin.query(`CREATE SCHEMA ${schema}`)
    const pool = new pg.Pool({ connectionString: inSchema(schema), max: 1 })
    pool.on('error', () => undefined)
    await migrate(pool)
    await pool.end()
    const proxies: FaultProxy[] = []
    return {
      schema,
      admin,
      proxies,
      open: (options) =>
        PostgresStorage.connect({ connectionString: inSchema(schema), poolSize: 4, ...options }),
      cleanup: async () => {
        for (const proxy of proxies) await proxy.close()
        await admin.query(`DROP SCHEMA ${schema} CASCADE`)
      },
    }
  },
  {
    // Every connection of the instance goes through a fault-injecting TCP proxy on 127.0.0.1.
    openFaulty: async ({ schema, proxies }) => {
      const direct = new URL(inSchema(schema))
      const proxy = await FaultProxy.start(direct.hostname, Number(direct.port || 5432))
      proxies.push(proxy)
      const storage = await PostgresStorage.connect({
        connectionString: proxy.through(direct.toString()),
        poolSize: 4,
        statementTimeoutMs: 3_000,
        connectionTimeoutMs: 3_000,
      })
      return {
        storage,
        cutBeforeSend: () => proxy.arm('before-send'),
        cutAfterCommit: () => proxy.arm('after-commit'),
        hold: () => proxy.hold(),
      }
    },
    // A holder whose process died stops renewing: its lease simply runs out.
    abandonLease: async ({ schema }, _holder, sessionId: SessionId) => {
      await admin.query(
        `UPDATE ${schema}.dsh_leases SET expires_at = now() - interval '1 second' WHERE session_id = $1`,
        [sessionId],
      )
    },
    // A row written by a newer format version is the closest a database gets to a foreign file.
    plantBadEntry: async ({ schema }) => {
      await admin.query(
        `INSERT INTO ${schema}.dsh_sessions (id, format_version, created_at) VALUES ('from-the-future', $1, 1)`,
        [SESSION_FORMAT_VERSION + 1],
      )
      return 'dsh_sessions/from-the-future'
    },
  },
)
