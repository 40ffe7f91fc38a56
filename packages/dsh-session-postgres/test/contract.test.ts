import type { SessionId } from 'dsh-llm'
import { SESSION_FORMAT_VERSION } from 'dsh-session'
import { describeStorageContract, type StorageContractBacking } from 'dsh-session/testing'
import { migrate, PostgresStorage } from 'dsh-session-postgres'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'
import { createDatabase, dropDatabase, urlOf } from './support.ts'

/** One schema per contract case, in this file's own database. */
interface SchemaBacking extends StorageContractBacking {
  readonly schema: string
  readonly admin: pg.Pool
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
    return {
      schema,
      admin,
      open: (options) =>
        PostgresStorage.connect({ connectionString: inSchema(schema), poolSize: 4, ...options }),
      cleanup: async () => {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`)
      },
    }
  },
  {
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
