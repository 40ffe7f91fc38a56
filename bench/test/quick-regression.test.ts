/**
 * The quick bench must catch a 2× step cost: with a busy wait injected into every append
 * (`BENCH_APPEND_DELAY_US`, read by the dsh bench child), `--only loop` — the quick suite's step-cost
 * check — exits 1 naming the step-cost bound. Builds the bench into `dist/regression/` first.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { STEP_RATIO_MAX } from '../src/bounds.ts'

const run = promisify(execFile)
const BENCH = fileURLToPath(new URL('..', import.meta.url))
const OUT = join(BENCH, 'dist', 'regression')
/**
 * µs of CPU time spun per append: ~35 appends per step make ~280 µs of CPU, more than the whole
 * in-memory step of today's dsh on the slower CI machine (~250 µs there, ~74 µs on the faster one),
 * so the step cost more than doubles on both — also under load, since the wait is CPU time and
 * stretches in wall time like the rest of the step.
 */
const DELAY_US = 8

describe('pnpm bench --quick step-cost bound', () => {
  let results = ''

  beforeAll(async () => {
    results = await mkdtemp(join(tmpdir(), 'dsh-bench-regression-'))
    const tsup = join(BENCH, '..', 'node_modules', '.bin', 'tsup')
    await run(tsup, ['--silent', '--out-dir', OUT, '--no-sourcemap'], { cwd: BENCH })
  }, 60_000)

  afterAll(async () => {
    await rm(results, { recursive: true, force: true })
    await rm(OUT, { recursive: true, force: true })
  })

  it('fails the step-cost bound when every append is slower by a delay that doubles the step', async () => {
    const outcome = await run(process.execPath, [join(OUT, 'main.js'), '--only', 'loop'], {
      cwd: BENCH,
      env: { ...process.env, BENCH_APPEND_DELAY_US: String(DELAY_US), BENCH_RESULTS_DIR: results },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    )
    expect(outcome.code).toBe(1)
    const violated = outcome.stderr.split('\n').filter((line) => line.startsWith('[bench] bound violated: '))
    expect(violated.some((line) => line.startsWith('[bench] bound violated: loop-wall-vs-pi: ratio '))).toBe(
      true,
    )
    expect(violated.filter((line) => / not measured| measurement failed/.test(line))).toEqual([])
    const table = await readFile(join(results, 'loop.md'), 'utf8')
    const row = table
      .split('\n')
      .find(
        (line) =>
          line.startsWith('| 1 tool loop | in-memory, wall µs/step (median) | ') &&
          line.includes('pi-agent-core'),
      )
    const ratio = Number(row?.split('|')[5]?.trim().replace('×', ''))
    expect(ratio).toBeGreaterThan(STEP_RATIO_MAX)
  }, 60_000)
})
