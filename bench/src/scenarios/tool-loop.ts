/**
 * Scenarios 1 and 2, the tool loop: every harness runs the same 1,000-step turn in fresh processes,
 * runs interleaved across harnesses so machine noise hits all of them alike; the per-run medians
 * are combined by their median.
 */
import type { LoopHarness } from '../child.ts'
import type { LoopSummary } from '../recorder.ts'
import { type FailedRow, type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median } from '../stats.ts'

/** The numeric fields of a run's summary. */
export type LoopField = Exclude<keyof LoopSummary, 'curve'>

/** The median over runs of each numeric field of the per-run summaries, and the median curve. */
export type LoopFigures = { readonly [K in LoopField]: number } & {
  readonly curve: readonly (readonly [number, number])[]
}

/** A harness's combined figures and its runs in order, or why it could not be measured. */
export type LoopOutcome =
  | { readonly ok: true; readonly figures: LoopFigures; readonly runs: readonly LoopSummary[] }
  | { readonly ok: false; readonly error: string }

/** The harnesses to run on one runtime: `node` is its executable (absent: this process's). */
export interface LoopRuntime {
  readonly node?: string
  readonly harnesses: readonly LoopHarness[]
}

/**
 * Runs each harness `runs` times for `steps` steps, interleaved (A B C A B C: run r of every harness
 * before run r + 1 of any), each run in a fresh process; failures are kept per harness. Harnesses in
 * `once` run only in the first round (a slow peer whose one run takes minutes).
 */
export async function measureLoops(
  harnesses: readonly LoopHarness[],
  steps: number,
  runs: number,
  dir: string,
  once: readonly LoopHarness[] = [],
): Promise<Map<LoopHarness, LoopOutcome>> {
  const [own] = await measureLoopsOn([{ harnesses }], steps, runs, dir, once)
  return own ?? new Map()
}

/**
 * `measureLoops` on several runtimes in the same rounds (round r runs every harness of every
 * runtime before round r + 1), so a change of load falls on every runtime alike; one result map
 * per runtime, in order.
 */
export async function measureLoopsOn(
  runtimes: readonly LoopRuntime[],
  steps: number,
  runs: number,
  dir: string,
  once: readonly LoopHarness[] = [],
): Promise<Map<LoopHarness, LoopOutcome>[]> {
  const samples = runtimes.map(() => new Map<LoopHarness, LoopSummary[]>())
  const errors = runtimes.map(() => new Map<LoopHarness, string>())
  for (let r = 0; r < runs; r++) {
    for (const [i, runtime] of runtimes.entries()) {
      const mine = samples[i] ?? new Map<LoopHarness, LoopSummary[]>()
      const failed = errors[i] ?? new Map<LoopHarness, string>()
      for (const harness of runtime.harnesses) {
        if (failed.has(harness) || (r > 0 && once.includes(harness))) continue
        try {
          const job = { kind: 'loop', harness, steps, dir } as const
          const summary = await runInChild(job, runtime.node === undefined ? {} : { node: runtime.node })
          mine.set(harness, [...(mine.get(harness) ?? []), summary])
        } catch (error) {
          failed.set(harness, error instanceof Error ? error.message : String(error))
        }
      }
    }
  }
  return runtimes.map((runtime, i) => {
    const out = new Map<LoopHarness, LoopOutcome>()
    for (const harness of runtime.harnesses) {
      const error = errors[i]?.get(harness)
      const list = samples[i]?.get(harness) ?? []
      out.set(
        harness,
        error !== undefined ? { ok: false, error } : { ok: true, figures: combine(list), runs: list },
      )
    }
    return out
  })
}

function combine(list: readonly LoopSummary[]): LoopFigures {
  const pick = (key: LoopField) => median(list.map((s) => s[key]))
  const first = list[0]?.curve ?? []
  return {
    steps: pick('steps'),
    wallUs: pick('wallUs'),
    meanWallUs: pick('meanWallUs'),
    cpuUs: pick('cpuUs'),
    growth: pick('growth'),
    firstGrowth: pick('firstGrowth'),
    firstUs: pick('firstUs'),
    midUs: pick('midUs'),
    lastUs: pick('lastUs'),
    earlyMeanUs: pick('earlyMeanUs'),
    lateMeanUs: pick('lateMeanUs'),
    curve: first.map(([step], i) => [step, median(list.map((s) => s.curve[i]?.[1] ?? Number.NaN))] as const),
    peakRssMb: pick('peakRssMb'),
    totalMs: pick('totalMs'),
    syncsPerStep: pick('syncsPerStep'),
    syncUs: pick('syncUs'),
    inlineSyncShare: pick('inlineSyncShare'),
    outsideSyncUs: pick('outsideSyncUs'),
  }
}

/**
 * A comparison row between two harnesses, a failed row when one of them failed, or `undefined`
 * when the plan did not run one of them.
 */
export function compare(
  results: ReadonlyMap<LoopHarness, LoopOutcome>,
  spec: {
    readonly id: string
    readonly scenario: string
    readonly metric: string
    readonly dsh: LoopHarness
    readonly baseline: LoopHarness
    readonly field: LoopField
    readonly target?: string
    readonly check?: (ratio: number, dsh: number) => boolean
    /** The target is a ratio (judged only when the baseline's runs agree). */
    readonly ratioTarget?: boolean
  },
): Row | FailedRow | undefined {
  const a = results.get(spec.dsh)
  const b = results.get(spec.baseline)
  if (!results.has(spec.dsh) || !results.has(spec.baseline)) return undefined
  const failed = [a, b].find((x) => x === undefined || !x.ok)
  if (a === undefined || b === undefined || !a.ok || !b.ok) {
    const who = failed === a ? spec.dsh : spec.baseline
    const error = `${who}: ${failed !== undefined && failed.ok === false ? failed.error : 'not measured'}`
    return { id: spec.id, scenario: spec.scenario, metric: spec.metric, error }
  }
  return row({
    id: spec.id,
    scenario: spec.scenario,
    metric: spec.metric,
    dsh: a.figures[spec.field],
    baselineName: spec.baseline,
    baseline: b.figures[spec.field],
    ...(spec.target === undefined ? {} : { target: spec.target }),
    ...(spec.check === undefined ? {} : { check: spec.check }),
    ...(spec.ratioTarget === undefined ? {} : { ratioTarget: spec.ratioTarget }),
    ...pairedRuns(a.runs, b.runs, spec.field),
  })
}

/** Per-run figures of two harnesses, paired by round; only when both ran the same number of rounds. */
function pairedRuns(
  a: readonly LoopSummary[],
  b: readonly LoopSummary[],
  field: LoopField,
): { runs?: { dsh: number[]; baseline: number[] } } {
  if (a.length !== b.length) return {}
  return { runs: { dsh: a.map((s) => s[field]), baseline: b.map((s) => s[field]) } }
}

/** The per-harness detail table of a tool-loop measurement. */
export function loopTable(results: ReadonlyMap<LoopHarness, LoopOutcome>, steps: number): string {
  const lines = [
    `| harness (${steps.toLocaleString('en-US')} steps) | runs | wall µs/step (median) | mean µs/step | CPU µs/step | first → middle → last tenth µs | growth (last / middle) | last / first | peak RSS MB |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const [harness, outcome] of results) {
    if (!outcome.ok) {
      lines.push(
        `| ${harness} | | failed: ${outcome.error.replaceAll('|', '/').replaceAll('\n', ' ')} | | | | | | |`,
      )
      continue
    }
    const f = outcome.figures
    lines.push(
      `| ${harness} | ${outcome.runs.length} | ${f.wallUs.toFixed(1)} | ${f.meanWallUs.toFixed(1)} | ${f.cpuUs.toFixed(1)} | ${f.firstUs.toFixed(1)} → ${f.midUs.toFixed(1)} → ${f.lastUs.toFixed(1)} | ${f.growth.toFixed(2)} | ${f.firstGrowth.toFixed(2)} | ${f.peakRssMb.toFixed(0)} |`,
    )
  }
  return lines.join('\n')
}
