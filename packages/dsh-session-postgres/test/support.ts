/**
 * Per-file PostgreSQL scaffolding: each test file gets its own database on the server the global
 * setup provides (embedded, or `DSH_TEST_PG_URL`), migrated, and dropped when the file is done.
 */
import { randomBytes } from 'node:crypto'
import { SessionId } from 'dsh-llm'
import type { SessionEvent, SessionFileHeader } from 'dsh-session'
import { contractEvent, contractEvents, contractHeader } from 'dsh-session/testing'
import { migrate, PostgresStorage, type PostgresStorageOptions } from 'dsh-session-postgres'
import pg from 'pg'
import { inject } from 'vitest'
// The `pgUrl` the global setup provides (its `ProvidedContext` declaration), for files outside this package too.
import type {} from './global-setup.ts'

/** A database of one test file. */
export interface TestDatabase {
  /** Its connection string. */
  readonly url: string
  /** A pool on it, ended by `drop`. */
  readonly pool: pg.Pool
  /** Ends every storage made by `storage`, the pool, and drops the database. */
  drop(): Promise<void>
  /** A storage on this database with its own pool (closed by `drop`). */
  storage(options?: Partial<PostgresStorageOptions>): Promise<PostgresStorage>
}

/** The connection string of `database` on the test server. */
export function urlOf(database: string): string {
  const url = new URL(inject('pgUrl'))
  url.pathname = `/${database}`
  return url.toString()
}

/** Creates an empty database (no schema) and returns its name. */
export async function createDatabase(): Promise<string> {
  const name = `dsh_t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: inject('pgUrl') })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  return name
}

/** Drops `name` (closing leftover connections). */
export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: inject('pgUrl') })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  } finally {
    await admin.end()
  }
}

/** A fresh, migrated database for one test file. */
export async function testDatabase(): Promise<TestDatabase> {
  const name = await createDatabase()
  const url = urlOf(name)
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  pool.on('error', () => undefined)
  await migrate(pool)
  const storages: PostgresStorage[] = []
  return {
    url,
    pool,
    storage: async (options = {}) => {
      const storage = await PostgresStorage.connect({ connectionString: url, poolSize: 4, ...options })
      storages.push(storage)
      return storage
    },
    drop: async () => {
      for (const storage of storages) await storage.close().catch(() => undefined)
      await pool.end()
      await dropDatabase(name)
    },
  }
}

/** A header for `id` (fixed `createdAt` unless given): the contract suite's header. */
export function header(id: string, createdAt?: number): SessionFileHeader {
  return contractHeader(SessionId(id), createdAt)
}

/** A `user/message` event at `seq` (the contract suite's event), and `count` of them from `from`. */
export { contractEvent as userEvent, contractEvents as userEvents }

/** Every stored event of `sessionId`, read back through `storage`. */
export async function stored(storage: PostgresStorage, sessionId: string): Promise<SessionEvent[]> {
  const events: SessionEvent[] = []
  for await (const event of storage.read(SessionId(sessionId), 0)) events.push(event)
  return events
}

/** Awaits `promise`, expecting a rejection; returns the error's class name, code and message. */
export async function failure(
  promise: Promise<unknown>,
): Promise<{ name: string; code: string; message: string }> {
  try {
    await promise
  } catch (error) {
    const record = error as { name?: string; code?: string; message?: string }
    return { name: record.name ?? '', code: record.code ?? '', message: record.message ?? '' }
  }
  throw new Error('expected a rejection')
}
