/** The DeepSeek preset of the OpenAI-compatible adapter. */
import type { LlmAdapter } from 'dsh-llm'
import { openAiCompatible } from './adapter.ts'
import type { DeepSeekOptions } from './types.ts'

/** DeepSeek's API root. */
export const DEEPSEEK_BASE_URL = 'https://api.deepseek.com'

/**
 * `openAiCompatible` preset for DeepSeek: `baseURL` defaults to `https://api.deepseek.com` and
 * `reasoningReplay` to `'reasoning_content'`, because DeepSeek's thinking mode requires the reasoning
 * of an assistant turn that called tools to be sent back (and ignores it elsewhere). Every other
 * option, and every override, behaves as in `openAiCompatible`; invalid options throw the same way.
 */
export function deepseek(options: DeepSeekOptions): LlmAdapter {
  return openAiCompatible({
    ...options,
    baseURL: options.baseURL ?? DEEPSEEK_BASE_URL,
    reasoningReplay: options.reasoningReplay ?? 'reasoning_content',
  })
}
