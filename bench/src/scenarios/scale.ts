/**
 * Scenario 5, scale in one process: `agents` agents each run a `steps`-step turn of the scripted
 * workload concurrently; each response arrives after a fixed per-agent, per-step delay spread over
 * `RESPONSE_SPREAD_MS` (see `responseDelayMs`), its chunks then without delay. Reports the total
 * wall time, the event-loop delay during the whole run (a 1 ms timer chain's lateness, see
 * `DelaySampler`; the rows pool every run's samples into one histogram) and the heap each agent
 * still holds once idle (heap after the run minus heap before the agents existed, after full GCs,
 * per agent).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { DelaySampler } from '../delay-sampler.ts'
import { piAgentDriver } from '../peers.ts'
import { type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median, percentile } from '../stats.ts'

/** What a scale run reports. */
export interface ScaleResult {
  readonly totalMs: number
  /** Event-loop delay over the whole run, from the first agent's start to the last agent idle. */
  readonly p50DelayMs: number
  readonly p99DelayMs: number
  readonly maxDelayMs: number
  /** Samples in the delay histogram (one per 1 ms timer tick the loop got to). */
  readonly delaySamples: number
  /** Every delay sample of the run, ms, for the pooled histogram. */
  readonly delaysMs: readonly number[]
  readonly heapPerAgentKb: number
}

/** A delay histogram with fewer samples than this does not support a p99; the row says so. */
export const MIN_DELAY_SAMPLES = 1000

/** The agent count the total-time and heap-per-agent targets are set for. */
const TARGET_AGENTS = 1000

/**
 * A prepared scale run: `start()` sends every agent its prompt and resolves when all are idle;
 * `agents` keeps them alive for the heap measurement.
 */
export interface ScaleRun {
  start(): Promise<void>
  /** Checks, after the measured run, that every agent did its whole turn; throws if not. */
  verify?(): void
  readonly agents: readonly unknown[]
}

/**
 * The heap after full GCs, taken in a job of its own: a `WeakRef` keeps its target alive until the
 * end of the job that created or dereferenced it, so a snapshot read just before (a session's
 * `events`, read by `verify`) would otherwise be counted as held by the agents.
 */
async function collect(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('scale: run the child with --expose-gc')
  await new Promise((resolve) => setImmediate(resolve))
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** Child side: one scale run of `impl`. */
export async function measureScale(
  impl: 'dsh' | 'pi-agent-core',
  agents: number,
  steps: number,
): Promise<ScaleResult> {
  // Load the implementation's modules and warm its code paths before the heap baseline.
  const create =
    impl === 'dsh' ? (await import('../loop/dsh.ts')).dshScaleRun : (await piAgentDriver()).piScaleRun
  return measureScaleRun(create, agents, steps)
}

/**
 * One scale run of the agents `create` makes (`create(1, steps)` first, to warm the code paths
 * before the heap baseline). Needs `--expose-gc`.
 */
export async function measureScaleRun(
  create: (agents: number, steps: number) => Promise<ScaleRun>,
  agents: number,
  steps: number,
): Promise<ScaleResult> {
  const warm = await create(1, steps)
  await warm.start()
  const before = await collect()
  const run: ScaleRun = await create(agents, steps)
  const delay = new DelaySampler()
  delay.start()
  const started = performance.now()
  await run.start()
  const totalMs = performance.now() - started
  // Let the sampler's timer fire once more, so a final blocked stretch is recorded too.
  await sleep(5)
  const delaysMs = delay.stop()
  run.verify?.()
  const after = await collect()
  const snapshot = process.env.BENCH_HEAP_SNAPSHOT
  if (snapshot !== undefined && snapshot !== '') (await import('node:v8')).writeHeapSnapshot(snapshot)
  if (run.agents.length !== agents) throw new Error(`scale: ${run.agents.length} agents, ${agents} expected`)
  return {
    totalMs,
    p50DelayMs: percentile(delaysMs, 50),
    p99DelayMs: percentile(delaysMs, 99),
    maxDelayMs: Math.max(...delaysMs),
    delaySamples: delaysMs.length,
    delaysMs,
    heapPerAgentKb: (after - before) / agents / 1024,
  }
}

/**
 * Parent side: interleaved runs of dsh and pi-agent-core, medians; `out` receives every run. With
 * `node`, the children run on that Node executable (another runtime, with its own peer release).
 */
export async function scaleScenario(
  agents: number,
  steps: number,
  runs: number,
  out?: { dsh: ScaleResult[]; pi: ScaleResult[] },
  node?: string,
): Promise<Row[]> {
  const dsh: ScaleResult[] = []
  const pi: ScaleResult[] = []
  const options = node === undefined ? { exposeGc: true } : { exposeGc: true, node }
  for (let r = 0; r < runs; r++) {
    pi.push(await runInChild({ kind: 'scale', impl: 'pi-agent-core', agents, steps }, options))
    dsh.push(await runInChild({ kind: 'scale', impl: 'dsh', agents, steps }, options))
  }
  if (out !== undefined) {
    out.dsh.push(...dsh)
    out.pi.push(...pi)
  }
  type Figure = Exclude<keyof ScaleResult, 'delaysMs'>
  const m = (list: ScaleResult[], key: Figure) => median(list.map((x) => x[key]))
  const runsOf = (key: Figure) => ({
    dsh: dsh.map((x) => x[key]),
    baseline: pi.map((x) => x[key]),
  })
  const what = `${agents.toLocaleString('en-US')} agents × ${steps}-step turn`
  // One histogram per implementation over every run's samples (each run covers its whole turn).
  const pooled = (list: ScaleResult[]) => list.flatMap((x) => x.delaysMs)
  const dshDelays = pooled(dsh)
  const piDelays = pooled(pi)
  const samples = dshDelays.length
  const enough = samples >= MIN_DELAY_SAMPLES
  // The total-time and heap targets are set for 1,000 agents: with fewer (the quick suite's 100), the
  // app's fixed cost weighs more per agent.
  const atScale = agents >= TARGET_AGENTS
  const histogram = `whole run × ${dsh.length} runs pooled, ${samples} samples${enough ? '' : ` (fewer than ${MIN_DELAY_SAMPLES}: the p99 is not judged)`}; pi-agent-core ${piDelays.length}`
  return [
    row({
      id: 'scale-total',
      scenario: '5 scale',
      metric: `total ms, ${what}`,
      dsh: m(dsh, 'totalMs'),
      baselineName: 'pi-agent-core',
      baseline: m(pi, 'totalMs'),
      runs: runsOf('totalMs'),
      ...(atScale ? { target: '≤ 1.5×', check: (ratio: number) => ratio <= 1.5, ratioTarget: true } : {}),
    }),
    row({
      id: 'scale-delay-p50',
      scenario: '5 scale',
      metric: `p50 event-loop delay, ms (${histogram})`,
      dsh: percentile(dshDelays, 50),
      baselineName: 'pi-agent-core',
      baseline: percentile(piDelays, 50),
      runs: runsOf('p50DelayMs'),
    }),
    row({
      id: 'scale-delay',
      scenario: '5 scale',
      metric: 'p99 event-loop delay, ms (pooled runs)',
      dsh: percentile(dshDelays, 99),
      baselineName: 'pi-agent-core',
      baseline: percentile(piDelays, 99),
      runs: runsOf('p99DelayMs'),
      ...(enough ? { target: 'dsh < 50 ms', check: (_ratio: number, value: number) => value < 50 } : {}),
    }),
    row({
      id: 'scale-delay-max',
      scenario: '5 scale',
      metric: 'max event-loop delay, ms (pooled runs)',
      dsh: Math.max(...dsh.map((x) => x.maxDelayMs)),
      baselineName: 'pi-agent-core',
      baseline: Math.max(...pi.map((x) => x.maxDelayMs)),
      runs: runsOf('maxDelayMs'),
    }),
    row({
      id: 'scale-heap',
      scenario: '5 scale',
      metric: 'heap per idle agent, KB',
      dsh: m(dsh, 'heapPerAgentKb'),
      baselineName: 'pi-agent-core',
      baseline: m(pi, 'heapPerAgentKb'),
      runs: runsOf('heapPerAgentKb'),
      ...(atScale ? { target: 'dsh ≤ 25 KB', check: (_ratio: number, value: number) => value <= 25 } : {}),
    }),
  ]
}
