/**
 * The demo, the README example and the docs' snippets type-check under the repository's strict
 * settings against the packages' built declarations, as an app outside this repository would see them
 * (`pnpm check` type-checks the packages only, so this is where the examples are checked).
 */
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

it('type-checks with tsc', () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const project = fileURLToPath(new URL('../tsconfig.dist.json', import.meta.url))
  const run = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8', timeout: 120_000 })
  expect(run.stdout + run.stderr).toBe('')
  expect(run.status).toBe(0)
}, 130_000)
