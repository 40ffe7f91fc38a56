/**
 * `pnpm bench [--quick]`: runs the suite and writes `bench/results/latest.md` (or `quick.md`);
 * `--quick` exits 1 when a regression bound is violated. `--child <job>` is the child-process side.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { QUICK_BOUNDS, violations } from './bounds.ts'
import { type Job, runJob } from './child.ts'
import { FULL, QUICK } from './plan.ts'
import { reportResult } from './spawn.ts'
import { runSuite } from './suite.ts'

const RESULTS = fileURLToPath(new URL('../results/', import.meta.url))

async function main(argv: readonly string[]): Promise<number> {
  const childAt = argv.indexOf('--child')
  if (childAt >= 0) {
    const job = JSON.parse(argv[childAt + 1] ?? 'null') as Job
    reportResult(await runJob(job))
    return 0
  }
  const quick = argv.includes('--quick')
  const plan = quick ? QUICK : FULL
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bench-'))
  try {
    const log = (message: string) => process.stderr.write(`[bench] ${message}\n`)
    const { rows, markdown } = await runSuite(plan, dir, log)
    await mkdir(RESULTS, { recursive: true })
    const out = join(RESULTS, quick ? 'quick.md' : 'latest.md')
    await writeFile(out, `${markdown}\n`)
    process.stdout.write(`${markdown}\nwritten to ${out}\n`)
    if (!quick) return 0
    const broken = violations(rows, QUICK_BOUNDS)
    for (const line of broken) process.stderr.write(`[bench] bound violated: ${line}\n`)
    if (broken.length === 0) process.stderr.write('[bench] every quick bound holds\n')
    return broken.length === 0 ? 0 : 1
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  },
)
