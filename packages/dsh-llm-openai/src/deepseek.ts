/** The DeepSeek preset of the OpenAI-compatible adapter. */
import { HarnessError, type LlmAdapter, LlmErrorCode } from 'dsh-llm'
import { openAiCompatible } from './adapter.ts'
import type { DeepSeekOptions } from './types.ts'

/** DeepSeek's API root. */
export const DEEPSEEK_BASE_URL = 'https://api.deepseek.com'

/**
 * `openAiCompatible` preset for DeepSeek: `baseURL` defaults to `https://api.deepseek.com` and
 * `reasoningReplay` to `'reasoning_content'`, because DeepSeek's thinking mode requires the reasoning
 * of an assistant turn that called tools to be sent back (and ignores it elsewhere). Every other
 * option, and every override, behaves as in `openAiCompatible`; invalid options throw the same way,
 * and a missing or empty `apiKey` throws `INVALID_OPTIONS` naming `DEEPSEEK_API_KEY`.
 */
export function deepseek(options: DeepSeekOptions): LlmAdapter {
  if (typeof options?.apiKey !== 'string' || options.apiKey.trim() === '') {
    throw new HarnessError(
      LlmErrorCode.INVALID_OPTIONS,
      'deepseek: apiKey is empty; set DEEPSEEK_API_KEY (https://platform.deepseek.com/api_keys)',
    )
  }
  return openAiCompatible({
    ...options,
    baseURL: options.baseURL ?? DEEPSEEK_BASE_URL,
    reasoningReplay: options.reasoningReplay ?? 'reasoning_content',
  })
}
