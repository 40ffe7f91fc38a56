/** `reasoningEffort` as each provider's own option. */
import type { SharedV3ProviderOptions } from '@ai-sdk/provider'
import type { LlmRequest, ReasoningEffort } from 'dsh-llm'
import type { PromptContext } from './prompt.ts'

/**
 * The thinking budget, in tokens, a `reasoningEffort` stands for on providers that take a budget
 * (Anthropic, Bedrock, Gemini): low 1,024 (Anthropic's minimum), medium 4,096, high 16,384.
 */
export const THINKING_BUDGET: Readonly<Record<ReasoningEffort, number>> = Object.freeze({
  low: 1024,
  medium: 4096,
  high: 16384,
})

/**
 * The provider options `request.reasoningEffort` becomes: Anthropic `thinking` (enabled, with the
 * budget), Bedrock `reasoningConfig` (the same), Google `thinkingConfig` (the budget, thoughts
 * included), OpenAI `reasoningEffort` as is. Any other provider gets nothing and a notice
 * `UNSUPPORTED_OPTION`. `undefined` when no effort is set.
 */
export function reasoningOptions(
  request: LlmRequest,
  context: PromptContext,
): SharedV3ProviderOptions | undefined {
  const effort = request.reasoningEffort
  if (effort === undefined) return undefined
  const budgetTokens = THINKING_BUDGET[effort]
  switch (context.providerKey) {
    case 'anthropic':
      return { anthropic: { thinking: { type: 'enabled', budgetTokens } } }
    case 'bedrock':
      return { bedrock: { reasoningConfig: { type: 'enabled', budgetTokens } } }
    case 'google':
      return { google: { thinkingConfig: { thinkingBudget: budgetTokens, includeThoughts: true } } }
    case 'openai':
      return { openai: { reasoningEffort: effort } }
    default:
      context.notice({
        code: 'UNSUPPORTED_OPTION',
        message: `${context.label}: reasoningEffort ${JSON.stringify(effort)} was not sent: this adapter knows no reasoning option for provider key ${JSON.stringify(context.providerKey)} (set it in providerOptions)`,
      })
      return undefined
  }
}
