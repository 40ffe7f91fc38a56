/** The end of a V3 stream: its finish reason and usage as dsh's. */
import type { LanguageModelV3FinishReason, LanguageModelV3Usage } from '@ai-sdk/provider'
import { type FinishReason, llmFailure, type Usage } from 'dsh-llm'
import { AiSdkErrorCode, type FailureContext } from './errors.ts'

/**
 * Maps a V3 finish reason: `stop` → `stop`, `tool-calls` → `tool-calls`, `length` → `max-tokens`;
 * `content-filter` (a safety stop, a refusal, a recitation) → error `CONTENT_FILTERED`; `error` and
 * `other` → error `UNKNOWN_FINISH_REASON`. Errors keep the provider's raw reason as `providerCode`.
 */
export function finishReasonOf(reason: LanguageModelV3FinishReason, context: FailureContext): FinishReason {
  const raw = reason.raw
  switch (reason.unified) {
    case 'stop':
      return { kind: 'stop' }
    case 'tool-calls':
      return { kind: 'tool-calls' }
    case 'length':
      return { kind: 'max-tokens' }
    case 'content-filter':
      return error(
        AiSdkErrorCode.CONTENT_FILTERED,
        raw,
        `${context.label} stopped the output (${raw ?? 'content-filter'})`,
        context,
      )
    default:
      return error(
        AiSdkErrorCode.UNKNOWN_FINISH_REASON,
        raw,
        `${context.label} ended the output with finish reason ${JSON.stringify(raw ?? reason.unified)}, which dsh has no kind for`,
        context,
      )
  }
}

function error(
  code: string,
  raw: string | undefined,
  message: string,
  context: FailureContext,
): FinishReason {
  return {
    kind: 'error',
    failure: llmFailure(code, message, { requestId: context.requestId, providerCode: raw }),
  }
}

/**
 * V3 usage as dsh's disjoint counts: `inputTokens` is the uncached input (`noCache`, else the total
 * less cache reads and writes, never below 0); `outputTokens` the total output (reasoning included);
 * `cacheReadTokens`, `cacheWriteTokens` and `reasoningTokens` present exactly when the provider
 * reported them. `undefined` when neither input nor output was reported.
 */
export function usageOf(usage: LanguageModelV3Usage | undefined): Usage | undefined {
  if (usage === undefined) return undefined
  const input = usage.inputTokens
  const output = usage.outputTokens
  if (input?.total === undefined && output?.total === undefined && input?.noCache === undefined)
    return undefined
  const read = count(input?.cacheRead)
  const write = count(input?.cacheWrite)
  const noCache =
    count(input?.noCache) ?? Math.max(0, (count(input?.total) ?? 0) - (read ?? 0) - (write ?? 0))
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens: noCache,
    outputTokens: count(output?.total) ?? 0,
  }
  if (read !== undefined) out.cacheReadTokens = read
  if (write !== undefined) out.cacheWriteTokens = write
  const reasoning = count(output?.reasoning)
  if (reasoning !== undefined) out.reasoningTokens = reasoning
  return out
}

function count(value: number | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}
