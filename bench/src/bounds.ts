/**
 * The regression bounds `pnpm bench --quick` enforces. They are deliberately looser than the issue's
 * targets: a shared, noisy 2-core machine must not fail them by chance, yet an O(n²) slip (growth),
 * a lost fast path (ratio against a peer or raw baseline) or a blocked event loop must.
 */
import { type FailedRow, NOISE_LIMIT, type Row } from './report.ts'

/** One bound on a row: on its ratio or on its dsh figure. */
export interface Bound {
  readonly id: string
  /** `paired`: the median of the per-run ratios (`Row.pairedRatio`), the ratio when there are none. */
  readonly on: 'ratio' | 'paired' | 'dsh'
  readonly max?: number
  readonly min?: number
  /** Why this number. */
  readonly why: string
  /** A bound on the step cost (checked by `--only loop` too). */
  readonly stepCost?: boolean
}

/**
 * The step-cost bound: dsh's in-memory µs/step over pi-agent-core's, both measured in the same run
 * (interleaved fresh processes, median of three). Set when children ran with `--enable-source-maps`:
 * above the highest ratio measured on the CI machines then (2.51 on a 2-core AMD EPYC) and below twice
 * the lowest there. Without the flag (2026-12-07) an idle 2-core machine measured 1.00–1.65×, so it
 * now catches a step about 2.5× today's (see docs/performance.md, "Quick-mode bounds";
 * `test/quick-regression.test.ts` proves an injected ~5× step fails it).
 */
export const STEP_RATIO_MAX = 2.8

/**
 * The quick-mode bounds (see docs/performance.md). Growth bounds guard complexity and sit just above
 * the 1.3 growth target. Ratio bounds sit at about twice the worst ratio the quick suite measured
 * after the hot-path passes (two quick runs and one full run on 2026-11-30, load average 2–3), so
 * today's code passes on a loaded 2-core machine and losing one fast path fails. The heap and
 * event-loop bounds are absolute: heap per agent barely moves with load, the delay does.
 */
export const QUICK_BOUNDS: readonly Bound[] = [
  {
    id: 'loop-wall-vs-pi',
    on: 'paired',
    max: STEP_RATIO_MAX,
    why: `step cost against pi-agent-core measured in the same run (median of the paired runs' ratios); a step about 2.5× today's exceeds ${STEP_RATIO_MAX}`,
    stepCost: true,
  },
  {
    id: 'loop-wall-vs-pi-mean',
    on: 'ratio',
    max: 5,
    why: 'the mean carries JIT warm-up and GC pauses; its per-run ratios spread 1.2–3.2× in one run, so it guards only against a collapse',
  },
  { id: 'loop-growth', on: 'dsh', max: 1.5, why: 'per-step cost growing with the history (an O(n²) turn)' },
  {
    id: 'inv-growth',
    on: 'dsh',
    max: 1.5,
    why: 'the request check folds each event once (incremental); a refold per request would grow',
  },
  {
    id: 'loop-jsonl',
    on: 'ratio',
    max: 4,
    why: 'target 1.3×; measured 1.7–1.8× (dsh’s step outside its syncs; the syncs are at parity)',
  },
  {
    id: 'inv-overhead',
    on: 'ratio',
    max: 10,
    why: 'measured 1.3–1.8× the unchecked loop on Node 20; on Node 24 the unchecked loop is ~1.9× faster and the checked one is not (≈510 µs/step on both: 5.0× vs 2.65×, single runs at load 17; 8.40× in a quick run at load 20–24); a refold per request is caught by inv-growth',
  },
  {
    id: 'assembly',
    on: 'ratio',
    max: 2.5,
    why: 'target 2×; measured 1.1–1.2×; quadratic assembly is far beyond',
  },
  {
    id: 'load',
    on: 'ratio',
    min: 0.25,
    why: 'target 0.5×; measured 0.55–0.71×; 0.24× before the fast payload checks',
  },
  {
    id: 'scale-heap',
    on: 'dsh',
    max: 130,
    why: 'target 25 KB; a per-agent leak',
  },
  {
    id: 'scale-delay',
    on: 'dsh',
    max: 250,
    why: 'target 50 ms; a synchronous stall of the event loop',
  },
]

/** The violated bounds among `rows`, one line each; a row that failed to measure is a violation. */
export function violations(rows: readonly (Row | FailedRow)[], bounds: readonly Bound[]): string[] {
  const out: string[] = []
  for (const bound of bounds) {
    const r = rows.find((x) => x.id === bound.id)
    if (r === undefined) {
      out.push(`${bound.id}: not measured`)
      continue
    }
    if ('error' in r) {
      out.push(`${bound.id}: measurement failed: ${r.error}`)
      continue
    }
    const value = bound.on === 'dsh' ? r.dsh : bound.on === 'paired' ? (r.pairedRatio ?? r.ratio) : r.ratio
    const what = bound.on === 'paired' ? 'ratio (paired runs)' : bound.on
    if (bound.max !== undefined && !(value <= bound.max)) {
      out.push(`${bound.id}: ${what} ${value.toFixed(2)} exceeds the bound ${bound.max} (${bound.why})`)
    }
    if (bound.min !== undefined && !(value >= bound.min)) {
      out.push(`${bound.id}: ${what} ${value.toFixed(2)} is below the bound ${bound.min} (${bound.why})`)
    }
  }
  return out
}

/**
 * Whether the quick suite is measured once more before it fails: some bound is violated, and every
 * violated row was measured beside a baseline whose runs disagreed by more than `NOISE_LIMIT` (the
 * machine changed while it ran; the full suite reports such a row "noisy — rerun"). The second
 * measurement is judged alone, so a regression fails there again; a violation beside a steady
 * baseline, or a row that failed to measure, fails at once.
 */
export function measureAgain(rows: readonly (Row | FailedRow)[], bounds: readonly Bound[]): boolean {
  let violated = 0
  for (const bound of bounds) {
    if (violations(rows, [bound]).length === 0) continue
    violated++
    const r = rows.find((x) => x.id === bound.id)
    if (r === undefined || 'error' in r || !((r.baselineSpread ?? 1) > NOISE_LIMIT)) return false
  }
  return violated > 0
}
