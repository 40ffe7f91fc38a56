/**
 * Cut points: where a history may be split so that no tool call is separated from its result. A
 * summary replaces a prefix ending at such a boundary, so every request keeps each call paired.
 */
import { isToolResultMessage, type Message } from 'dsh-llm'
import type { TokenEstimator } from './tokens.ts'

/**
 * `balanced[c]` for every `c` in `[0, history.length]`: true when every tool call of
 * `history[0, c)` is answered inside `history[0, c)` and `history[c]` (if any) is not a tool result.
 */
export function balancedBoundaries(history: readonly Message[]): boolean[] {
  const out: boolean[] = []
  const pending = new Set<string>()
  for (let c = 0; c <= history.length; c++) {
    const message = history[c]
    out.push(pending.size === 0 && (message === undefined || !isToolResultMessage(message)))
    if (message === undefined) break
    if (isToolResultMessage(message)) pending.delete(message.content[0].toolCallId)
    else if (message.role === 'assistant') {
      for (const block of message.content) if (block.type === 'tool-call') pending.add(block.id)
    }
  }
  return out
}

/**
 * The smallest balanced boundary `c` whose tail `history[c, end)` is estimated at most `keepTokens`
 * (the tail kept verbatim after a summary of `history[0, c)`); `history.length` when even the last
 * message alone is over it, so the summary then stands for everything.
 */
export function chooseCut(
  history: readonly Message[],
  keepTokens: number,
  estimator: TokenEstimator,
): number {
  const balanced = balancedBoundaries(history)
  let tail = 0
  let cut = history.length
  for (let c = history.length; c >= 0; c--) {
    if (c < history.length) {
      const message = history[c]
      if (message !== undefined) tail += estimator.message(message)
    }
    if (tail > keepTokens) break
    if (balanced[c] === true) cut = c
  }
  return cut
}

/** The largest balanced boundary at or below `limit` whose prefix `history[0, c)` fits `budget` tokens. */
export function largestFittingBoundary(
  history: readonly Message[],
  limit: number,
  budget: number,
  estimator: TokenEstimator,
): number {
  const balanced = balancedBoundaries(history)
  let best = 0
  let used = 0
  for (let c = 0; c <= limit; c++) {
    if (used > budget) break
    if (balanced[c] === true) best = c
    const message = history[c]
    if (message !== undefined) used += estimator.message(message)
  }
  return best
}
