/** Runs every scenario of a plan side by side and renders the results file and its chart. */
import { type Bar, chartSvg, type Series } from './chart.ts'
import type { LoopHarness } from './child.ts'
import type { Plan } from './plan.ts'
import { type FailedRow, machineLine, NOISE_LIMIT, type Row, table } from './report.ts'
import { besideRows, ownRuntime, type Runtime, runtimeLine, withPeerVersions } from './runtimes.ts'
import { assemblyScenario } from './scenarios/assembly.ts'
import { backpressureScenario } from './scenarios/backpressure.ts'
import { barrierScenario } from './scenarios/barriers.ts'
import { invariantsCliScenario } from './scenarios/invariants-cli.ts'
import { longRows, loopRows } from './scenarios/loop-rows.ts'
import { type ScaleResult, scaleScenario } from './scenarios/scale.ts'
import { storageScenario } from './scenarios/storage.ts'
import {
  type LoopOutcome,
  type LoopRuntime,
  loopTable,
  measureLoops,
  measureLoopsOn,
} from './scenarios/tool-loop.ts'
import { median } from './stats.ts'

/** What a suite run produced. */
export interface SuiteResult {
  readonly rows: readonly (Row | FailedRow)[]
  /** The results file: machine line, ratio table, detail tables. */
  readonly markdown: string
  /** The chart the results file links to (`chartName`). */
  readonly svg: string
}

type Progress = (message: string) => void

/** The harnesses drawn in the step chart, in legend order. */
const CHARTED: readonly LoopHarness[] = ['floor', 'pi-agent-core', 'dsh-memory', 'ai-sdk']

/**
 * Runs `plan` with scratch files under `dir`, reporting progress through `log`; the markdown links
 * the chart as `chartName` (written next to it by the caller). With `beside`, the 1,000-step loop's
 * `plan.besideHarnesses` and the scale scenario also run on that runtime (see `runtimes.ts`).
 */
export async function runSuite(
  plan: Plan,
  dir: string,
  log: Progress,
  chartName: string,
  beside?: Runtime,
): Promise<SuiteResult> {
  const started = performance.now()
  const own = ownRuntime()
  const rows: (Row | FailedRow | undefined)[] = []
  const details: string[] = []

  log(`tool loop: ${plan.loopSteps} steps × ${plan.runs} runs × ${plan.loopHarnesses.length} harnesses`)
  const runtimes: LoopRuntime[] = [{ harnesses: plan.loopHarnesses }]
  if (beside?.node !== undefined) {
    log(`  and ${plan.besideHarnesses.join(', ')} on Node ${beside.version}, in the same rounds`)
    runtimes.push({ node: beside.node, harnesses: plan.besideHarnesses })
  }
  const measured = await measureLoopsOn(runtimes, plan.loopSteps, plan.runs, dir)
  const loops = measured[0] ?? new Map<LoopHarness, LoopOutcome>()
  const besideLoops = measured[1]
  rows.push(...loopRows(loops))
  details.push(loopTable(loops, plan.loopSteps))
  if (beside !== undefined && besideLoops !== undefined) {
    rows.push(...besideRows(defined(loopRows(besideLoops)), beside))
    details.push(`Node ${beside.version}:`, loopTable(besideLoops, plan.loopSteps))
  }

  let charted: { results: ReadonlyMap<LoopHarness, LoopOutcome>; steps: number } = {
    results: loops,
    steps: plan.loopSteps,
  }
  if (plan.longSteps > 0) {
    log(`long tool loop: ${plan.longSteps} steps × ${plan.longRuns} runs`)
    const long = await measureLoops(plan.longHarnesses, plan.longSteps, plan.longRuns, dir, plan.longOnce)
    rows.push(...longRows(long, plan.longSteps))
    details.push(loopTable(long, plan.longSteps))
    charted = { results: long, steps: plan.longSteps }
  }

  if (plan.assemblyDeltas > 0) {
    log(`assembly: ${plan.assemblyDeltas} deltas`)
    rows.push(
      ...(await guarded('assembly', '3 assembly', () => assemblyScenario(plan.assemblyDeltas, plan.runs))),
    )
  }

  if (plan.storageEvents > 0) {
    log(`storage: ${plan.storageEvents} events`)
    rows.push(
      ...(await guarded('load', '4 storage', () =>
        storageScenario(plan.storageEvents, plan.storageBatches, plan.runs, dir),
      )),
    )
  }

  if (plan.name === 'full') {
    log('barriers: JSONL barrier breakdown')
    rows.push(...(await guarded('barrier-storage', '4 storage', () => barrierScenario(2000, 5))))
    log('backpressure: 200 MiB behind a stalled sync')
    rows.push(...(await guarded('backpressure-rss', '4 storage', () => backpressureScenario(200, plan.runs))))
  }

  const scale = { dsh: [] as ScaleResult[], pi: [] as ScaleResult[] }
  if (plan.scaleAgents > 0) {
    log(`scale: ${plan.scaleAgents} agents`)
    rows.push(
      ...(await guarded('scale-delay', '5 scale', () =>
        scaleScenario(plan.scaleAgents, plan.scaleSteps, plan.scaleRuns, scale),
      )),
    )
    if (beside?.node !== undefined) {
      const node = beside.node
      log(`scale: ${plan.scaleAgents} agents on Node ${beside.version}`)
      const other = await guarded('scale-delay', '5 scale', () =>
        scaleScenario(plan.scaleAgents, plan.scaleSteps, plan.scaleRuns, undefined, node),
      )
      rows.push(...besideRows(other, beside))
    }
  }

  if (plan.invariantsEvents.length > 0) {
    log(`invariants CLI: ${plan.invariantsEvents.join(', ')} events`)
    rows.push(
      ...(await guarded('invariants-cli', '7 invariants CLI', () =>
        invariantsCliScenario(plan.invariantsEvents, plan.runs, dir, log),
      )),
    )
  }

  if (plan.postgres !== undefined) {
    const pgPlan = plan.postgres
    log(`postgres: ${pgPlan.steps} steps, ${pgPlan.loadEvents} events, 2 hosts × ${pgPlan.agents} agents`)
    // Imported only when it runs (its server runs in a child process: see scenarios/postgres.ts).
    const { postgresScenario } = await import('./scenarios/postgres.ts')
    rows.push(...(await guarded('pg-step', '6 postgres', () => postgresScenario(pgPlan))))
  }

  const done = withPeerVersions(defined(rows), own)
  const seconds = (performance.now() - started) / 1000
  const ownRows = beside === undefined ? 'every row' : `every row without a Node version in its scenario`
  const markdown = [
    `# dsh benchmark results (${plan.name})`,
    '',
    machineLine(),
    '',
    `Runtimes: ${runtimeLine(own, ownRows)}${beside === undefined ? '' : ` ${runtimeLine(beside, `the rows marked "Node ${beside.version}" (the same rounds; informational, no targets)`)}`}`,
    '',
    `Suite wall time: ${seconds.toFixed(0)} s. Every measured thing runs in a fresh process, interleaved with the thing it is compared with (A B A B); figures are medians over runs: ${plan.runs} for the ${plan.loopSteps.toLocaleString('en-US')}-step loop, assembly and storage${plan.longSteps > 0 ? `; ${plan.longRuns} for the ${plan.longSteps.toLocaleString('en-US')}-step loop (${plan.longOnce.join(', ') || 'none'} once)` : ''}; ${plan.scaleRuns} for scale. "per-run ratios" is the lowest and highest ratio of one run's figures; a ratio target whose baseline's runs disagree by more than ${NOISE_LIMIT}× is marked "noisy — rerun" instead of judged.`,
    '',
    table(done),
    '',
    `![µs per step against step number, and heap per idle agent](${chartName})`,
    '',
    '## Tool loop, per harness',
    '',
    ...details.flatMap((d) => [d, '']),
  ].join('\n')
  const series: Series[] = []
  for (const harness of CHARTED) {
    const outcome = charted.results.get(harness)
    if (outcome?.ok === true) series.push({ name: harness, points: outcome.figures.curve })
  }
  const bars: Bar[] = []
  if (scale.dsh.length > 0) bars.push({ name: 'dsh', value: median(scale.dsh.map((x) => x.heapPerAgentKb)) })
  if (scale.pi.length > 0)
    bars.push({ name: 'pi-agent-core', value: median(scale.pi.map((x) => x.heapPerAgentKb)) })
  return { rows: done, markdown, svg: chartSvg(series, charted.steps, bars, 50) }
}

function defined<T>(list: readonly (T | undefined)[]): T[] {
  return list.filter((x) => x !== undefined)
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
