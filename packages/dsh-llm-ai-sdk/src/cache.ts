/** Prompt-cache breakpoints from the request's cache policy. */
import type { LanguageModelV3Message, SharedV3ProviderOptions } from '@ai-sdk/provider'
import type { LlmRequest } from 'dsh-llm'
import type { PromptContext } from './prompt.ts'

/** The most breakpoints one Anthropic request may carry. */
const MAX_BREAKPOINTS = 4

/**
 * Marks cache breakpoints on `prompt` in place when `request.cachePolicy.breakpoints` is `'auto'`
 * and the provider takes explicit breakpoints (Anthropic `cacheControl`, Bedrock `cachePoint`, as
 * message provider options, which the provider packages put on the message's last part). At most
 * four, in prompt order, without repeats: the system message (tools and system prompt); the last
 * session-prefix message (`cachePolicy.prefixMessages`); the last message of the previous request
 * (the message just before the latest assistant message); the last message. `positions[i]` is the
 * prompt index of `request.messages[i]`. Other providers cache automatically: nothing is marked.
 */
export function cacheBreakpoints(
  prompt: LanguageModelV3Message[],
  positions: readonly number[],
  request: LlmRequest,
  context: PromptContext,
): void {
  const policy = request.cachePolicy
  if (policy === undefined || policy.breakpoints !== 'auto') return
  const marker = markerFor(context.providerKey, policy.ttl)
  if (marker === undefined) return
  const marks: number[] = []
  const add = (index: number | undefined) => {
    if (index !== undefined && index >= 0 && !marks.includes(index)) marks.push(index)
  }
  if (prompt[0]?.role === 'system') add(0)
  const prefix = policy.prefixMessages ?? 0
  if (prefix > 0 && prefix <= positions.length) add(positions[prefix - 1])
  const messages = request.messages
  let lastAssistant = -1
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'assistant') {
      lastAssistant = i
      break
    }
  }
  if (lastAssistant > 0) add(positions[lastAssistant - 1])
  add(positions[positions.length - 1])
  marks.sort((a, b) => a - b)
  for (const index of marks.slice(-MAX_BREAKPOINTS)) {
    const message = prompt[index]
    if (message === undefined) continue
    message.providerOptions = mergeMarker(message.providerOptions, marker)
  }
}

function markerFor(providerKey: string, ttl: '5m' | '1h' | undefined): SharedV3ProviderOptions | undefined {
  switch (providerKey) {
    case 'anthropic':
      return {
        anthropic: { cacheControl: ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl } },
      }
    case 'bedrock':
      return { bedrock: { cachePoint: { type: 'default' } } }
    default:
      return undefined
  }
}

function mergeMarker(
  options: SharedV3ProviderOptions | undefined,
  marker: SharedV3ProviderOptions,
): SharedV3ProviderOptions {
  if (options === undefined) return marker
  const out: SharedV3ProviderOptions = { ...options }
  for (const [key, value] of Object.entries(marker)) out[key] = { ...(out[key] ?? {}), ...value }
  return out
}
