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

/** The tenths of a run the growth figures compare: first, middle and last, as index ranges. */
export function tenths(n: number): { readonly window: number; readonly midStart: number } {
  const window = Math.max(1, Math.floor(n / 10))
  return { window, midStart: Math.floor((n - window) / 2) }
}

/**
 * Growth of per-step cost over a run: the median of the last tenth of the samples over the median
 * of the middle tenth (steps 9,001–10,000 over 4,501–5,500 for a 10,000-step run). The middle, not
 * the first tenth: every harness is slow while V8 compiles its code, and a slow start would hide a
 * cost that grows with the session.
 */
export function growth(perStep: Float64Array): number {
  const { window, midStart } = tenths(perStep.length)
  return (
    median(perStep.subarray(perStep.length - window)) / median(perStep.subarray(midStart, midStart + window))
  )
}

/**
 * The curve of a run: `buckets` consecutive equal slices of `perStep`, each reduced to its mean
 * (so GC pauses show), as `[first step of the slice (1-based), mean]` pairs.
 */
export function curve(perStep: Float64Array, buckets: number): [number, number][] {
  const n = perStep.length
  const count = Math.min(buckets, n)
  const out: [number, number][] = []
  for (let b = 0; b < count; b++) {
    const from = Math.floor((b * n) / count)
    const to = Math.floor(((b + 1) * n) / count)
    out.push([from + 1, mean(perStep.subarray(from, to))])
  }
  return out
}

/** `max / min` of `values` (1 for a single value, NaN when empty): how far runs disagree. */
export function spread(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  return Math.max(...values) / Math.min(...values)
}
