/** Runs every scenario of a plan side by side and renders the results file. */
import type { LoopHarness } from './child.ts'
import type { Plan } from './plan.ts'
import { type FailedRow, machineLine, type Row, table } from './report.ts'
import { assemblyScenario } from './scenarios/assembly.ts'
import { backpressureScenario } from './scenarios/backpressure.ts'
import { barrierScenario } from './scenarios/barriers.ts'
import { scaleScenario } from './scenarios/scale.ts'
import { storageScenario } from './scenarios/storage.ts'
import { compare, type LoopOutcome, loopTable, measureLoops } from './scenarios/tool-loop.ts'

/** What a suite run produced. */
export interface SuiteResult {
  readonly rows: readonly (Row | FailedRow)[]
  /** The results file: machine line, ratio table, detail tables. */
  readonly markdown: string
}

type Progress = (message: string) => void

/** Runs `plan` with scratch files under `dir`, reporting progress through `log`. */
export async function runSuite(plan: Plan, dir: string, log: Progress): Promise<SuiteResult> {
  const started = performance.now()
  const rows: (Row | FailedRow)[] = []
  const details: string[] = []

  log(`tool loop: ${plan.loopSteps} steps × ${plan.runs} runs × ${plan.loopHarnesses.length} harnesses`)
  const loops = await measureLoops(plan.loopHarnesses, plan.loopSteps, plan.runs, dir)
  rows.push(...loopRows(loops).filter((x) => x !== undefined))
  details.push(loopTable(loops, plan.loopSteps))

  if (plan.longSteps > 0) {
    log(`long tool loop: ${plan.longSteps} steps × ${plan.longRuns} runs`)
    const long = await measureLoops(plan.longHarnesses, plan.longSteps, plan.longRuns, dir)
    rows.push(...longRows(long, plan.longSteps).filter((x) => x !== undefined))
    details.push(loopTable(long, plan.longSteps))
  }

  log(`assembly: ${plan.assemblyDeltas} deltas`)
  rows.push(
    ...(await guarded('assembly', '3 assembly', () => assemblyScenario(plan.assemblyDeltas, plan.runs))),
  )

  log(`storage: ${plan.storageEvents} events`)
  rows.push(
    ...(await guarded('load', '4 storage', () =>
      storageScenario(plan.storageEvents, plan.storageBatches, plan.runs, dir),
    )),
  )

  log('barriers: JSONL barrier breakdown')
  rows.push(...(await guarded('barrier-storage', '4 storage', () => barrierScenario(2000, 5))))

  log('backpressure: 200 MiB behind a stalled sync')
  rows.push(...(await guarded('backpressure-rss', '4 storage', () => backpressureScenario(200, plan.runs))))

  log(`scale: ${plan.scaleAgents} agents`)
  rows.push(
    ...(await guarded('scale-delay', '5 scale', () =>
      scaleScenario(plan.scaleAgents, plan.scaleSteps, plan.scaleRuns),
    )),
  )

  const seconds = (performance.now() - started) / 1000
  const markdown = [
    `# dsh benchmark results (${plan.name})`,
    '',
    machineLine(),
    `Suite wall time: ${seconds.toFixed(0)} s. Figures are medians of fresh-process runs: ${plan.runs} for the ${plan.loopSteps.toLocaleString('en-US')}-step loop, assembly and storage${plan.longSteps > 0 ? `; ${plan.longRuns} for the ${plan.longSteps.toLocaleString('en-US')}-step loop` : ''}; ${plan.scaleRuns} for scale.`,
    '',
    table(rows),
    '',
    '## Tool loop, per harness',
    '',
    ...details.flatMap((d) => [d, '']),
  ].join('\n')
  return { rows, markdown }
}

async function guarded(
  id: string,
  scenario: string,
  run: () => Promise<Row[]>,
): Promise<(Row | FailedRow)[]> {
  try {
    return await run()
  } catch (error) {
    return [{ id, scenario, metric: 'all', error: error instanceof Error ? error.message : String(error) }]
  }
}

function loopRows(r: ReadonlyMap<LoopHarness, LoopOutcome>): (Row | FailedRow | undefined)[] {
  const s1 = '1 tool loop'
  const wall = 'wall µs/step (median)'
  const rows = [
    compare(r, {
      id: 'loop-wall-vs-pi',
      scenario: s1,
      metric: `in-memory, ${wall}`,
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'wallUs',
      target: '≤ 1.0×',
      check: (x) => x <= 1,
    }),
    compare(r, {
      id: 'loop-wall-vs-ai',
      scenario: s1,
      metric: `in-memory, ${wall}`,
      dsh: 'dsh-memory',
      baseline: 'ai-sdk',
      field: 'wallUs',
      target: '≤ 0.25×',
      check: (x) => x <= 0.25,
    }),
    compare(r, {
      id: 'loop-wall-vs-floor',
      scenario: s1,
      metric: `in-memory, ${wall}`,
      dsh: 'dsh-memory',
      baseline: 'floor',
      field: 'wallUs',
    }),
    compare(r, {
      id: 'loop-cpu-vs-pi',
      scenario: s1,
      metric: 'in-memory, CPU µs/step (median)',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'cpuUs',
    }),
    compare(r, {
      id: 'loop-growth',
      scenario: s1,
      metric: 'in-memory, growth (steps 901–1000 / 1–100)',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'growth',
      target: 'dsh ≤ 1.3',
      check: (_x, v) => v <= 1.3,
    }),
    compare(r, {
      id: 'loop-late-growth',
      scenario: s1,
      metric: 'in-memory, late growth (steps 901–1000 / 451–550)',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'lateGrowth',
    }),
    compare(r, {
      id: 'loop-rss',
      scenario: s1,
      metric: 'in-memory, peak RSS MB',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'peakRssMb',
    }),
    compare(r, {
      id: 'loop-jsonl',
      scenario: s1,
      metric: `JSONL + barriers, ${wall}`,
      dsh: 'dsh-jsonl',
      baseline: 'floor-jsonl',
      field: 'wallUs',
      target: '≤ 1.2×',
      check: (x) => x <= 1.2,
    }),
    compare(r, {
      id: 'loop-jsonl-growth',
      scenario: s1,
      metric: 'JSONL + barriers, growth',
      dsh: 'dsh-jsonl',
      baseline: 'floor-jsonl',
      field: 'growth',
    }),
    compare(r, {
      id: 'inv-overhead',
      scenario: '2 invariants on',
      metric: `${wall}, every check mounted`,
      dsh: 'dsh-invariants',
      baseline: 'dsh-memory',
      field: 'wallUs',
    }),
    compare(r, {
      id: 'inv-growth',
      scenario: '2 invariants on',
      metric: 'growth (steps 901–1000 / 1–100)',
      dsh: 'dsh-invariants',
      baseline: 'dsh-memory',
      field: 'growth',
    }),
    compare(r, {
      id: 'inv-late-growth',
      scenario: '2 invariants on',
      metric: 'late growth (steps 901–1000 / 451–550)',
      dsh: 'dsh-invariants',
      baseline: 'dsh-memory',
      field: 'lateGrowth',
    }),
  ]
  return rows
}

function longRows(r: ReadonlyMap<LoopHarness, LoopOutcome>, steps: number): (Row | FailedRow | undefined)[] {
  const s1 = `1 tool loop, ${steps.toLocaleString('en-US')} steps`
  return [
    compare(r, {
      id: 'long-growth',
      scenario: s1,
      metric: 'in-memory, growth (last / first tenth)',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'growth',
      target: 'dsh ≤ 1.3',
      check: (_x, v) => v <= 1.3,
    }),
    compare(r, {
      id: 'long-growth-floor',
      scenario: s1,
      metric: 'in-memory, growth (last / first tenth)',
      dsh: 'dsh-memory',
      baseline: 'floor',
      field: 'growth',
    }),
    compare(r, {
      id: 'long-wall',
      scenario: s1,
      metric: 'in-memory, wall µs/step (median)',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'wallUs',
    }),
    compare(r, {
      id: 'long-rss',
      scenario: s1,
      metric: 'in-memory, peak RSS MB',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'peakRssMb',
    }),
  ]
}
