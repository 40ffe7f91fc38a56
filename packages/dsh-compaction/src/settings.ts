/** The plugin's knobs resolved against a context window, with defaults filled in and checked. */
import { CompactionError } from './errors.ts'
import { DEFAULT_PRUNE, type PruneSettings } from './prune.ts'
import type { CompactionConfig, SummarizerOptions } from './types.ts'

/** Every knob a compaction reads, resolved for one window. */
export interface CompactionSettings {
  readonly window: number
  readonly threshold: number
  readonly targetRatio: number
  readonly keepTokens: number
  readonly prune: PruneSettings | false
  readonly summarizer: SummarizerOptions
  readonly summaryMaxTokens: number
}

function ratio(name: string, value: number): number {
  if (!(value > 0 && value <= 1)) {
    throw new CompactionError('INVALID_OPTIONS', `dsh-compaction: ${name} must be in (0, 1], got ${value}`)
  }
  return value
}

function tokens(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new CompactionError(
      'INVALID_OPTIONS',
      `dsh-compaction: ${name} must be a token count, got ${value}`,
    )
  }
  return value
}

/**
 * The settings for a `window`-token context. Throws `INVALID_OPTIONS` naming the knob when a ratio is
 * outside (0, 1] or a token count is not a non-negative integer.
 */
export function resolveSettings(config: CompactionConfig, window: number): CompactionSettings {
  tokens('window', window)
  const threshold = ratio('threshold', config.threshold ?? 0.8)
  const targetRatio = ratio('targetRatio', config.targetRatio ?? 0.5)
  const keepTokens = tokens('keepTokens', config.keepTokens ?? Math.min(20_000, Math.floor(window / 4)))
  const summarizer = config.summarizer ?? {}
  const summaryMaxTokens = tokens(
    'summarizer.maxTokens',
    summarizer.maxTokens ?? Math.min(8192, Math.floor(window * 0.08)),
  )
  const prune =
    config.prune === false
      ? false
      : {
          aboveTokens: tokens('prune.aboveTokens', config.prune?.aboveTokens ?? DEFAULT_PRUNE.aboveTokens),
          headChars: tokens('prune.headChars', config.prune?.headChars ?? DEFAULT_PRUNE.headChars),
          tailChars: tokens('prune.tailChars', config.prune?.tailChars ?? DEFAULT_PRUNE.tailChars),
        }
  return { window, threshold, targetRatio, keepTokens, prune, summarizer, summaryMaxTokens }
}
