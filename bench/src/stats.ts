/** Small order statistics over measured samples. */

/** The median of `values` (the mean of the two middle values for an even count); NaN when empty. */
export function median(values: ArrayLike<number>): number {
  return percentile(values, 50)
}

/**
 * The `p`-th percentile (0–100) of `values` by linear interpolation between closest ranks; NaN
 * when empty. Does not modify its input.
 */
export function percentile(values: ArrayLike<number>, p: number): number {
  const sorted = Float64Array.from(values).sort()
  if (sorted.length === 0) return Number.NaN
  const rank = (p / 100) * (sorted.length - 1)
  const lo = Math.floor(rank)
  const hi = Math.ceil(rank)
  const a = sorted[lo] ?? Number.NaN
  const b = sorted[hi] ?? Number.NaN
  return a + (b - a) * (rank - lo)
}

/** The arithmetic mean of `values`; NaN when empty. */
export function mean(values: ArrayLike<number>): number {
  let sum = 0
  for (let i = 0; i < values.length; i++) sum += values[i] ?? 0
  return values.length === 0 ? Number.NaN : sum / values.length
}

/**
 * Growth of per-step cost over a run: the median of the last tenth of the samples over the median
 * of the first tenth (steps 901–1000 over steps 1–100 for a 1,000-step run).
 */
export function growth(perStep: ArrayLike<number>): number {
  const n = perStep.length
  const window = Math.max(1, Math.floor(n / 10))
  const first = Array.prototype.slice.call(perStep, 0, window) as number[]
  const last = Array.prototype.slice.call(perStep, n - window) as number[]
  return median(last) / median(first)
}
