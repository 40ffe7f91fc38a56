/** The result rows of the tool-loop scenarios (1 and 2): each step-time comparison as median and mean. */
import type { LoopHarness } from '../child.ts'
import type { FailedRow, Row } from '../report.ts'
import { compare, type LoopOutcome } from './tool-loop.ts'

type Results = ReadonlyMap<LoopHarness, LoopOutcome>
type Out = (Row | FailedRow | undefined)[]

/** A ratio target: at most `max` times the baseline. */
interface RatioTarget {
  readonly text: string
  readonly max: number
}

function judgedBy(target: RatioTarget | undefined) {
  return target === undefined
    ? {}
    : { target: target.text, check: (x: number) => x <= target.max, ratioTarget: true }
}

/**
 * The per-step wall comparison of `dsh` with `baseline`, once on the median and once on the mean;
 * `meanTarget` judges the mean when it differs from the median's `target`.
 */
function wallPair(
  r: Results,
  id: string,
  scenario: string,
  what: string,
  dsh: LoopHarness,
  baseline: LoopHarness,
  target?: RatioTarget,
  meanTarget: RatioTarget | undefined = target,
): Out {
  return [
    compare(r, {
      id,
      scenario,
      metric: `${what}, wall µs/step (median)`,
      dsh,
      baseline,
      field: 'wallUs',
      ...judgedBy(target),
    }),
    compare(r, {
      id: `${id}-mean`,
      scenario,
      metric: `${what}, wall µs/step (mean)`,
      dsh,
      baseline,
      field: 'meanWallUs',
      ...judgedBy(meanTarget),
    }),
  ]
}

/** A harness's median share of syncs run inline, as a percentage for a label ('?' if not measured). */
function inlinePercent(r: Results, harness: LoopHarness): string {
  const outcome = r.get(harness)
  return outcome?.ok === true ? `${Math.round(outcome.figures.inlineSyncShare * 100)}%` : '?'
}

/**
 * Where the JSONL step's time goes, dsh against the raw floor: the syncs (how many per step, how
 * long one takes, how many ran inline rather than on the thread pool) and the wall time of a step
 * outside its syncs (the harness's own work between barriers: the agent loop, encoding, writes).
 */
function jsonlBreakdown(r: Results, scenario: string): Out {
  const pair = { scenario, dsh: 'dsh-jsonl', baseline: 'floor-jsonl' } as const
  return [
    compare(r, {
      ...pair,
      id: 'loop-jsonl-syncs',
      metric: 'JSONL + barriers, fdatasync calls per step',
      field: 'syncsPerStep',
    }),
    compare(r, {
      ...pair,
      id: 'loop-jsonl-sync-us',
      metric: `JSONL + barriers, µs per fdatasync (median; inline: dsh ${inlinePercent(r, 'dsh-jsonl')}, floor ${inlinePercent(r, 'floor-jsonl')})`,
      field: 'syncUs',
    }),
    compare(r, {
      ...pair,
      id: 'loop-jsonl-outside',
      metric: 'JSONL + barriers, wall µs/step outside the syncs (median)',
      field: 'outsideSyncUs',
    }),
  ]
}

/** Rows of the 1,000-step loop. */
export function loopRows(r: Results): Out {
  const s1 = '1 tool loop'
  return [
    ...wallPair(
      r,
      'loop-wall-vs-pi',
      s1,
      'in-memory',
      'dsh-memory',
      'pi-agent-core',
      { text: '≤ 1.0×', max: 1 },
      { text: '≤ 1.15×', max: 1.15 },
    ),
    ...wallPair(r, 'loop-wall-vs-ai', s1, 'in-memory', 'dsh-memory', 'ai-sdk', {
      text: '≤ 0.25×',
      max: 0.25,
    }),
    ...wallPair(r, 'loop-wall-vs-floor', s1, 'in-memory', 'dsh-memory', 'floor'),
    compare(r, {
      id: 'loop-early-vs-pi',
      scenario: s1,
      metric: 'in-memory, mean µs/step of the first 30% of steps (warm-up)',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'earlyMeanUs',
    }),
    compare(r, {
      id: 'loop-late-vs-pi',
      scenario: s1,
      metric: 'in-memory, mean µs/step of the last 30% of steps',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'lateMeanUs',
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
      metric: 'in-memory, growth (steps 901–1000 / 451–550)',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'growth',
    }),
    compare(r, {
      id: 'loop-rss',
      scenario: s1,
      metric: 'in-memory, peak RSS MB',
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'peakRssMb',
    }),
    ...wallPair(r, 'loop-jsonl', s1, 'JSONL + barriers', 'dsh-jsonl', 'floor-jsonl', {
      text: '≤ 1.3×',
      max: 1.3,
    }),
    ...jsonlBreakdown(r, s1),
    compare(r, {
      id: 'loop-jsonl-growth',
      scenario: s1,
      metric: 'JSONL + barriers, growth (last / middle tenth)',
      dsh: 'dsh-jsonl',
      baseline: 'floor-jsonl',
      field: 'growth',
    }),
    ...wallPair(r, 'inv-overhead', '2 invariants on', 'every check mounted', 'dsh-invariants', 'dsh-memory', {
      text: '≤ 1.3×',
      max: 1.3,
    }),
    compare(r, {
      id: 'inv-growth',
      scenario: '2 invariants on',
      metric: 'growth (steps 901–1000 / 451–550)',
      dsh: 'dsh-invariants',
      baseline: 'dsh-memory',
      field: 'growth',
    }),
  ]
}

/** Rows of the long loop (10,000 steps in the full suite): growth is judged here. */
export function longRows(r: Results, steps: number): Out {
  const s1 = `1 tool loop, ${steps.toLocaleString('en-US')} steps`
  const growthMetric = 'in-memory, growth (last tenth / middle tenth)'
  return [
    compare(r, {
      id: 'long-growth',
      scenario: s1,
      metric: growthMetric,
      dsh: 'dsh-memory',
      baseline: 'pi-agent-core',
      field: 'growth',
      target: 'dsh ≤ 1.2',
      check: (_x, v) => v <= 1.2,
    }),
    compare(r, {
      id: 'long-growth-floor',
      scenario: s1,
      metric: growthMetric,
      dsh: 'dsh-memory',
      baseline: 'floor',
      field: 'growth',
    }),
    ...wallPair(r, 'long-wall', s1, 'in-memory', 'dsh-memory', 'pi-agent-core', { text: '≤ 0.6×', max: 0.6 }),
    ...wallPair(r, 'long-wall-vs-ai', s1, 'in-memory', 'dsh-memory', 'ai-sdk'),
    ...wallPair(r, 'long-wall-vs-floor', s1, 'in-memory', 'dsh-memory', 'floor'),
    compare(r, {
      id: 'long-inv-growth',
      scenario: `2 invariants on, ${steps.toLocaleString('en-US')} steps`,
      metric: 'every check mounted, growth (last tenth / middle tenth)',
      dsh: 'dsh-invariants',
      baseline: 'dsh-memory',
      field: 'growth',
      target: 'dsh ≤ 1.2',
      check: (_x, v) => v <= 1.2,
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
