/** What changed between two consecutive requests, in the terms a prefix cache cares about. */
import type { LlmRequest, Message } from 'dsh-llm'
import type { RequestDiff } from './types.ts'

const CONFIG_FIELDS = ['provider', 'model', 'temperature', 'maxTokens', 'reasoningEffort', 'stop'] as const

function same(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}

/** Equal as the model receives them: message ids are the log's, never sent to a provider. */
function sameMessage(a: Message | undefined, b: Message | undefined): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined) return false
  const { id: _a, ...restA } = a
  const { id: _b, ...restB } = b
  return JSON.stringify(restA) === JSON.stringify(restB)
}

/**
 * The diff of `current` against `previous` (number `previousNumber`). `kept` counts the leading
 * messages equal in both, ids aside (a resumed agent recomposes its session prefix with fresh ids, and
 * no provider sees them); a cache break is a change to the system prompt or tools, or any message of
 * the previous request not kept. With no previous request everything is added and nothing breaks.
 */
export function diffRequests(
  previous: LlmRequest | undefined,
  current: LlmRequest,
  previousNumber: number | undefined,
): RequestDiff {
  if (previous === undefined) {
    return {
      kept: 0,
      removed: 0,
      added: current.messages.length,
      systemChanged: false,
      toolsChanged: false,
      configChanged: [],
      cacheBreak: false,
    }
  }
  let kept = 0
  const limit = Math.min(previous.messages.length, current.messages.length)
  while (kept < limit && sameMessage(previous.messages[kept], current.messages[kept])) kept++
  const systemChanged = !same(previous.system, current.system)
  const toolsChanged = !same(previous.tools, current.tools)
  const removed = previous.messages.length - kept
  return {
    ...(previousNumber === undefined ? {} : { previous: previousNumber }),
    kept,
    removed,
    added: current.messages.length - kept,
    systemChanged,
    toolsChanged,
    configChanged: CONFIG_FIELDS.filter((field) => !same(previous[field], current[field])),
    cacheBreak: systemChanged || toolsChanged || removed > 0,
  }
}
