/**
 * `pnpm bench [--quick | --only loop | --only jsonl | --only scale | --only backpressure | --only postgres |
 * --only reconstruct |
 * --only instructions [--long] | --only peers] [--beside <node>]`:
 * runs the suite and writes `bench/results/latest.md` and `latest.svg` (`quick.*`, `loop.*`, `jsonl.*`);
 * `--beside <node>` also runs the tool loop's peers and baselines, and scale, on that Node executable
 * (Node 20 with its pinned peers) in the same rounds, as extra rows of the same table (`runtimes.ts`);
 * `--quick`, `--only loop` and `--only jsonl` exit 1 when a regression bound is violated (`--only
 * loop` and `--only jsonl` check the bounds of the rows they measured: the step-cost ratios, the
 * JSONL ratio). `--only instructions` counts the tool loop's per-step work under callgrind (needs
 * valgrind) and writes `instructions.md`; with `--long`, the counted growth over the 10,000-step turn
 * (`instructions-growth.md`, ~30 min).
 * `--child <job>` is the child-process side.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { measureAgain, QUICK_BOUNDS, violations } from './bounds.ts'
import { type Job, runJob } from './child.ts'
import { FULL, INVARIANTS_ONLY, JSONL_ONLY, LOOP_ONLY, PEERS_ONLY, QUICK } from './plan.ts'
import { type Runtime, runtimeOf } from './runtimes.ts'
import { reportResult } from './spawn.ts'
import { runSuite } from './suite.ts'

/** Where results go: `bench/results/`, or `BENCH_RESULTS_DIR` (the regression test writes to a temp dir). */
const RESULTS = process.env.BENCH_RESULTS_DIR || fileURLToPath(new URL('../results/', import.meta.url))

async function main(argv: readonly string[]): Promise<number> {
  const childAt = argv.indexOf('--child')
  if (childAt >= 0) {
    const job = JSON.parse(argv[childAt + 1] ?? 'null') as Job
    // Set by `--only instructions` for its callgrind children (see `CLOCK_SCALE`).
    const scale = process.env.BENCH_CLOCK_SCALE
    if (scale !== undefined && scale !== '')
      (await import('./scenarios/instructions.ts')).slowClock(Number(scale))
    reportResult(await runJob(job))
    return 0
  }
  const onlyAt = argv.indexOf('--only')
  const only = onlyAt >= 0 ? argv[onlyAt + 1] : undefined
  if (only === 'postgres') {
    const { postgresScenario } = await import('./scenarios/postgres.ts')
    const { POSTGRES } = await import('./plan.ts')
    const { table } = await import('./report.ts')
    process.stdout.write(`${table(await postgresScenario(POSTGRES))}\n`)
    return 0
  }
  if (only === 'scale') {
    // The full suite's scale rows alone (1,000 agents, interleaved with pi-agent-core).
    const { scaleScenario } = await import('./scenarios/scale.ts')
    const { table } = await import('./report.ts')
    const rows = await scaleScenario(FULL.scaleAgents, FULL.scaleSteps, FULL.scaleRuns)
    process.stdout.write(`${table(rows)}\n`)
    return 0
  }
  if (only === 'reconstruct') {
    // Offline request reconstruction at two sizes (time, peak RSS, growth exponent).
    const { reconstructScenario } = await import('./scenarios/reconstruct.ts')
    const { table } = await import('./report.ts')
    const rows = await reconstructScenario([25_000, 100_000], 3, (message) =>
      process.stderr.write(`${message}\n`),
    )
    process.stdout.write(`${table(rows)}\n`)
    return rows.every((entry) => entry.met !== false) ? 0 : 1
  }
  if (only === 'backpressure') {
    // The full suite's backpressure rows alone (200 MiB behind a stalled sync, fresh processes).
    const { backpressureScenario } = await import('./scenarios/backpressure.ts')
    const { table } = await import('./report.ts')
    process.stdout.write(`${table(await backpressureScenario(200, FULL.runs))}\n`)
    return 0
  }
  if (only === 'instructions') {
    // Counted, not timed: one callgrind run per harness and turn length (see the scenario).
    // With `--long`: the counted growth over the 10,000-step turn instead (four runs per harness).
    const long = argv.includes('--long')
    const { countedGrowthScenario, instructionsScenario } = await import('./scenarios/instructions.ts')
    const { machineLine, table } = await import('./report.ts')
    const dir = await mkdtemp(join(tmpdir(), 'dsh-bench-'))
    try {
      const log = (message: string) => process.stderr.write(`[bench] ${message}\n`)
      const rows = long
        ? await countedGrowthScenario(FULL.longSteps, dir, log)
        : await instructionsScenario(FULL.loopSteps, dir, log)
      const title = long ? 'counted growth' : 'instruction counts'
      const markdown = `# dsh bench: ${title}\n\n${machineLine()}\n\n${table(rows)}\n`
      await mkdir(RESULTS, { recursive: true })
      const out = join(RESULTS, long ? 'instructions-growth.md' : 'instructions.md')
      await writeFile(out, markdown)
      process.stdout.write(`${markdown}\nwritten to ${out}\n`)
      return 0
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }
  if (
    only !== undefined &&
    only !== 'loop' &&
    only !== 'jsonl' &&
    only !== 'invariants' &&
    only !== 'peers'
  ) {
    throw new Error(
      `bench: --only ${only}: only "loop", "jsonl", "invariants", "peers", "scale", "backpressure", "postgres" and "instructions" are known`,
    )
  }
  const besideAt = argv.indexOf('--beside')
  let beside: Runtime | undefined
  if (besideAt >= 0) {
    const node = argv[besideAt + 1]
    if (node === undefined || node.startsWith('--'))
      throw new Error('bench: --beside needs a Node executable')
    beside = await runtimeOf(node)
  }
  const quick = argv.includes('--quick') || only !== undefined
  const plan =
    only === 'loop'
      ? LOOP_ONLY
      : only === 'jsonl'
        ? JSONL_ONLY
        : only === 'invariants'
          ? INVARIANTS_ONLY
          : only === 'peers'
            ? PEERS_ONLY
            : quick
              ? QUICK
              : FULL
  const name = only ?? (quick ? 'quick' : 'latest')
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bench-'))
  try {
    const log = (message: string) => process.stderr.write(`[bench] ${message}\n`)
    const measure = async () => {
      const { rows, markdown, svg } = await runSuite(plan, dir, log, `${name}.svg`, beside)
      await mkdir(RESULTS, { recursive: true })
      const out = join(RESULTS, `${name}.md`)
      await writeFile(out, `${markdown}\n`)
      await writeFile(join(RESULTS, `${name}.svg`), `${svg}\n`)
      process.stdout.write(`${markdown}\nwritten to ${out}\n`)
      return rows
    }
    let rows = await measure()
    if (!quick || only === 'peers') return 0
    const bounds =
      only === 'loop'
        ? QUICK_BOUNDS.filter((b) => b.stepCost === true)
        : only === 'jsonl'
          ? QUICK_BOUNDS.filter((b) => b.id === 'loop-jsonl')
          : only === 'invariants'
            ? QUICK_BOUNDS.filter((b) => b.id.startsWith('inv-'))
            : QUICK_BOUNDS
    if (measureAgain(rows, bounds)) {
      for (const line of violations(rows, bounds)) process.stderr.write(`[bench] bound violated: ${line}\n`)
      log('every violated row ran beside a baseline that disagreed with itself (noisy): measuring again')
      rows = await measure()
    }
    const broken = violations(rows, bounds)
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
