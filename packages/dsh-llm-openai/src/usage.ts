/** Token usage: the provider's overlapping counts become dsh's disjoint ones. */
import { isRecord, type Usage } from 'dsh-llm'
import { type JsonRecord, numberField } from './json.ts'

/**
 * Maps a Chat Completions `usage` object. Cached prompt tokens come from DeepSeek's
 * `prompt_cache_hit_tokens` or OpenAI's `prompt_tokens_details.cached_tokens`; the provider counts them
 * inside `prompt_tokens`, so `inputTokens` is the difference (never below 0). `cacheReadTokens` and
 * `reasoningTokens` are present exactly when the provider reported them. Returns `undefined` when
 * `prompt_tokens` or `completion_tokens` is missing.
 */
export function mapUsage(raw: JsonRecord): Usage | undefined {
  const prompt = numberField(raw.prompt_tokens)
  const completion = numberField(raw.completion_tokens)
  if (prompt === undefined || completion === undefined) return undefined
  const promptDetails = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {}
  const completionDetails = isRecord(raw.completion_tokens_details) ? raw.completion_tokens_details : {}
  const cacheRead = numberField(raw.prompt_cache_hit_tokens) ?? numberField(promptDetails.cached_tokens)
  const reasoning = numberField(completionDetails.reasoning_tokens)
  const usage: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens: Math.max(0, prompt - (cacheRead ?? 0)),
    outputTokens: completion,
  }
  if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead
  if (reasoning !== undefined) usage.reasoningTokens = reasoning
  return usage
}
