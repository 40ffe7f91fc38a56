/** Token usage arithmetic (dsh counts are disjoint; a sum keeps each kind apart). */
import type { Usage } from 'dsh-llm'

/** `{inputTokens: 0, outputTokens: 0}`. */
export const ZERO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 })

/** Field-wise sum; an optional count is present in the result when present in either side. */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
  }
  for (const key of ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
    const x = a[key]
    const y = b[key]
    if (x !== undefined || y !== undefined) sum[key] = (x ?? 0) + (y ?? 0)
  }
  return sum
}
