/** Result rows, the markdown table and the machine line. */
import { cpus, loadavg } from 'node:os'
import { median, spread } from './stats.ts'

/**
 * A baseline whose runs disagree by more than this factor (slowest over fastest run) is
 * inconsistent with itself: the machine changed under it, so a target judged against it is
 * reported "noisy — rerun" instead of met or missed.
 */
export const NOISE_LIMIT = 1.5

/** One line of the results table: a dsh figure next to a baseline measured in the same run. */
export interface Row {
  /** Stable key, used by the quick-mode bounds. */
  readonly id: string
  readonly scenario: string
  /** What is measured, with its unit. */
  readonly metric: string
  readonly dsh: number
  readonly baselineName: string
  readonly baseline: number
  /** `dsh / baseline`; for higher-is-better metrics still dsh over baseline. */
  readonly ratio: number
  /** The target, in words (`≤ 1.0×`), or empty when the row is informational. */
  readonly target: string
  /** Whether the target is met; undefined for informational rows. */
  readonly met: boolean | undefined
  /** Lowest and highest ratio of one run's dsh figure over the same run's baseline (interleaved runs). */
  readonly ratioRange?: readonly [number, number]
  /**
   * The median of those per-run ratios: each run's dsh figure over the baseline that ran next to
   * it, so a machine that slows down between runs moves both sides of a pair alike.
   */
  readonly pairedRatio?: number
  /** Slowest over fastest run of the baseline (1 for a single run). */
  readonly baselineSpread?: number
  /** The target is judged against a baseline that disagreed with itself: rerun on a quieter machine. */
  readonly noisy?: boolean
}

/** Builds a row; `check` decides `met` from the ratio (or from the dsh figure) when given. */
export function row(
  fields: Omit<
    Row,
    'ratio' | 'met' | 'target' | 'ratioRange' | 'pairedRatio' | 'baselineSpread' | 'noisy'
  > & {
    readonly target?: string
    readonly check?: (ratio: number, dsh: number) => boolean
    /** Per-run figures, paired by run (run i of dsh ran next to run i of the baseline). */
    readonly runs?: { readonly dsh: readonly number[]; readonly baseline: readonly number[] }
    /** The target is a ratio: judge it only when the baseline agrees with itself (`NOISE_LIMIT`). */
    readonly ratioTarget?: boolean
  },
): Row {
  const ratio = fields.dsh / fields.baseline
  const { check, target, runs, ratioTarget, ...rest } = fields
  const out: Row = {
    ...rest,
    ratio,
    target: target ?? '',
    met: check === undefined ? undefined : check(ratio, rest.dsh),
  }
  if (runs === undefined || runs.dsh.length === 0 || runs.dsh.length !== runs.baseline.length) return out
  const ratios = runs.dsh.map((d, i) => d / (runs.baseline[i] ?? Number.NaN))
  const baselineSpread = spread(runs.baseline)
  return {
    ...out,
    ratioRange: [Math.min(...ratios), Math.max(...ratios)],
    pairedRatio: median(ratios),
    baselineSpread,
    noisy: ratioTarget === true && check !== undefined && baselineSpread > NOISE_LIMIT,
  }
}

/** A row for a measurement that failed: it keeps its place in the table with the reason. */
export interface FailedRow {
  readonly id: string
  readonly scenario: string
  readonly metric: string
  readonly error: string
}

/** Formats a figure with sensible precision. */
export function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  const abs = Math.abs(value)
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US')
  if (abs >= 100) return value.toFixed(0)
  if (abs >= 10) return value.toFixed(1)
  return value.toFixed(2)
}

/** The markdown results table. */
export function table(rows: readonly (Row | FailedRow)[]): string {
  const lines = [
    '| scenario | metric | dsh | baseline | ratio | per-run ratios | baseline spread | target | met |',
    '| --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- |',
  ]
  for (const r of rows) {
    if ('error' in r) {
      lines.push(`| ${r.scenario} | ${r.metric} | failed | ${r.error.replaceAll('|', '/')} | | | | | |`)
      continue
    }
    const met = r.noisy === true ? '**noisy — rerun**' : r.met === undefined ? '' : r.met ? 'yes' : '**no**'
    const range = r.ratioRange === undefined ? '' : `${fmt(r.ratioRange[0])}–${fmt(r.ratioRange[1])}×`
    const baseSpread = r.baselineSpread === undefined ? '' : `${fmt(r.baselineSpread)}×`
    lines.push(
      `| ${r.scenario} | ${r.metric} | ${fmt(r.dsh)} | ${r.baselineName}: ${fmt(r.baseline)} | ${fmt(r.ratio)}× | ${range} | ${baseSpread} | ${r.target} | ${met} |`,
    )
  }
  return lines.join('\n')
}

/**
 * CPU model, core count, Node version, date, and the load average when the run ended (how busy the
 * shared machine was): the line every result file carries.
 */
export function machineLine(date: Date = new Date()): string {
  const list = cpus()
  const model = list[0]?.model.trim() ?? 'unknown CPU'
  const load = loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ')
  return `Machine: ${model}, ${list.length} cores, Node ${process.version}, ${process.platform}/${process.arch}, ${date.toISOString()}, load average ${load} (1/5/15 min)`
}
