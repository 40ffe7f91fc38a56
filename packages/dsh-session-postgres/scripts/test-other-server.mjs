/**
 * Runs this package's tests, dsh-fleet's and the fleet example's against ANOTHER PostgreSQL server through
 * `DSH_TEST_PG_URL`, the way a CI with its own database would: a second server (started here in a
 * child process, with PostgreSQL's default `max_connections=100`), a role that is not a superuser and
 * only has `CREATEDB`, and leftover `dsh_t_*` databases from an "earlier run" (one with an open
 * connection). Exits 1 if the tests fail, if the leftovers were touched, or if the run left a
 * database of its own behind. Needs the packages built (`pnpm build`), like `pnpm test`.
 *
 *   node packages/dsh-session-postgres/scripts/test-other-server.mjs
 */
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..', '..')
const LEFTOVERS = ['dsh_t_leftover_a', 'dsh_t_leftover_b']

const server = spawn(process.execPath, [join(here, '..', 'test', 'fixtures', 'pg-server.mjs')], {
  stdio: ['pipe', 'pipe', 'inherit'],
  env: { ...process.env, DSH_PG_SERVER_MAX_CONNECTIONS: '100' },
})
const [line] = await once(createInterface({ input: server.stdout }), 'line')
const { url, error } = JSON.parse(String(line))
if (url === undefined) {
  console.error(`the other server did not start: ${error}`)
  process.exit(1)
}

let failed = false
const fail = (why) => {
  failed = true
  console.error(`other-server check: ${why}`)
}
const admin = new pg.Client({ connectionString: url })
await admin.connect()
const holder = { client: undefined }
try {
  await admin.query("CREATE ROLE tester LOGIN PASSWORD 'tester' CREATEDB NOSUPERUSER")
  for (const name of LEFTOVERS) await admin.query(`CREATE DATABASE ${name} OWNER tester`)
  const limited = new URL(url)
  limited.username = 'tester'
  limited.password = 'tester'
  // An "earlier run" left a database with a connection still open.
  const leftover = new URL(limited)
  leftover.pathname = `/${LEFTOVERS[0]}`
  holder.client = new pg.Client({ connectionString: leftover.toString() })
  await holder.client.connect()

  const run = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--project',
      'dsh-session-postgres',
      '--project',
      'dsh-fleet',
      '--project',
      'dsh-example-fleet',
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, DSH_TEST_PG_URL: limited.toString() } },
  )
  if (run.status !== 0) fail(`the tests exited ${run.status} against ${limited.host} as a CREATEDB role`)

  const { rows } = await admin.query(
    "SELECT datname FROM pg_database WHERE datname LIKE 'dsh\\_t\\_%' ORDER BY 1",
  )
  const left = rows.map((row) => row.datname)
  if (JSON.stringify(left) !== JSON.stringify(LEFTOVERS)) {
    fail(`expected only the planted databases ${LEFTOVERS.join(', ')} afterwards, found ${left.join(', ')}`)
  }
} finally {
  await holder.client?.end()
  await admin.end()
  server.stdin.end()
  await once(server, 'exit')
}
console.log(failed ? 'other-server check FAILED' : 'other-server check passed')
process.exit(failed ? 1 : 0)
