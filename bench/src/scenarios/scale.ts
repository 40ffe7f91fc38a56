/**
 * Scenario 5, scale in one process: `agents` agents each run a `steps`-step turn of the scripted
 * workload concurrently; each response arrives after a fixed per-agent, per-step delay spread over
 * `RESPONSE_SPREAD_MS` (see `responseDelayMs`), its chunks then without delay. Reports the total wall time, the p99 event-loop delay during the run
 * (`perf_hooks.monitorEventLoopDelay`, 1 ms resolution) and the heap each agent still holds once
 * idle (heap after the run minus heap before the agents existed, after full GCs, per agent).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median } from '../stats.ts'

/** What a scale run reports. */
export interface ScaleResult {
  readonly totalMs: number
  /** Event-loop delay over the whole run, from the first agent's start to the last agent idle. */
  readonly p50DelayMs: number
  readonly p99DelayMs: number
  readonly maxDelayMs: number
  /** Samples in the delay histogram (one per 1 ms timer tick the loop got to). */
  readonly delaySamples: number
  readonly heapPerAgentKb: number
}

/** A delay histogram with fewer samples than this does not support a p99; the row says so. */
export const MIN_DELAY_SAMPLES = 1000

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

function collect(): number {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('scale: run the child with --expose-gc')
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
    impl === 'dsh'
      ? (await import('../loop/dsh.ts')).dshScaleRun
      : (await import('../loop/pi-agent.ts')).piScaleRun
  const warm = await create(1, steps)
  await warm.start()
  const before = collect()
  const run: ScaleRun = await create(agents, steps)
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const started = performance.now()
  await run.start()
  const totalMs = performance.now() - started
  // Let the monitor's timer fire once more, so a final blocked stretch is recorded too.
  await sleep(5)
  delay.disable()
  run.verify?.()
  const after = collect()
  const snapshot = process.env.BENCH_HEAP_SNAPSHOT
  if (snapshot !== undefined && snapshot !== '') (await import('node:v8')).writeHeapSnapshot(snapshot)
  if (run.agents.length !== agents) throw new Error(`scale: ${run.agents.length} agents, ${agents} expected`)
  return {
    totalMs,
    p50DelayMs: delay.percentile(50) / 1e6,
    p99DelayMs: delay.percentile(99) / 1e6,
    maxDelayMs: delay.max / 1e6,
    delaySamples: delay.count,
    heapPerAgentKb: (after - before) / agents / 1024,
  }
}

/** Parent side: interleaved runs of dsh and pi-agent-core, medians; `out` receives every run. */
export async function scaleScenario(
  agents: number,
  steps: number,
  runs: number,
  out?: { dsh: ScaleResult[]; pi: ScaleResult[] },
): Promise<Row[]> {
  const dsh: ScaleResult[] = []
  const pi: ScaleResult[] = []
  for (let r = 0; r < runs; r++) {
    pi.push(await runInChild({ kind: 'scale', impl: 'pi-agent-core', agents, steps }, { exposeGc: true }))
    dsh.push(await runInChild({ kind: 'scale', impl: 'dsh', agents, steps }, { exposeGc: true }))
  }
  if (out !== undefined) {
    out.dsh.push(...dsh)
    out.pi.push(...pi)
  }
  const m = (list: ScaleResult[], key: keyof ScaleResult) => median(list.map((x) => x[key]))
  const runsOf = (key: keyof ScaleResult) => ({
    dsh: dsh.map((x) => x[key]),
    baseline: pi.map((x) => x[key]),
  })
  const what = `${agents.toLocaleString('en-US')} agents × ${steps}-step turn`
  const samples = m(dsh, 'delaySamples')
  const enough = samples >= MIN_DELAY_SAMPLES
  const histogram = `whole run, ${samples.toFixed(0)} samples${enough ? '' : ` (fewer than ${MIN_DELAY_SAMPLES}: the p99 is not judged)`}`
  return [
    row({
      id: 'scale-total',
      scenario: '5 scale',
      metric: `total ms, ${what}`,
      dsh: m(dsh, 'totalMs'),
      baselineName: 'pi-agent-core',
      baseline: m(pi, 'totalMs'),
      runs: runsOf('totalMs'),
    }),
    row({
      id: 'scale-delay-p50',
      scenario: '5 scale',
      metric: `p50 event-loop delay, ms (${histogram})`,
      dsh: m(dsh, 'p50DelayMs'),
      baselineName: 'pi-agent-core',
      baseline: m(pi, 'p50DelayMs'),
      runs: runsOf('p50DelayMs'),
    }),
    row({
      id: 'scale-delay',
      scenario: '5 scale',
      metric: 'p99 event-loop delay, ms',
      dsh: m(dsh, 'p99DelayMs'),
      baselineName: 'pi-agent-core',
      baseline: m(pi, 'p99DelayMs'),
      runs: runsOf('p99DelayMs'),
      ...(enough ? { target: 'dsh < 50 ms', check: (_ratio: number, value: number) => value < 50 } : {}),
    }),
    row({
      id: 'scale-delay-max',
      scenario: '5 scale',
      metric: 'max event-loop delay, ms',
      dsh: m(dsh, 'maxDelayMs'),
      baselineName: 'pi-agent-core',
      baseline: m(pi, 'maxDelayMs'),
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
      target: 'dsh ≤ 50 KB',
      check: (_ratio, value) => value <= 50,
    }),
  ]
}
