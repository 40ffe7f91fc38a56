export { DEFAULT_TIMEOUT_MS, openAiCompatible } from './adapter.ts'
export { DEEPSEEK_BASE_URL, deepseek } from './deepseek.ts'
export { OpenAiErrorCode } from './errors.ts'
export { REQUEST_ID_HEADERS } from './request-id.ts'
export { MAX_RETRY_AFTER_MS } from './retry-after.ts'
export type {
  ChatCompletionBody,
  DeepSeekOptions,
  MaxTokensField,
  OpenAiCompatibleOptions,
  ReasoningReplay,
  WireMessage,
  WireTool,
  WireToolCall,
} from './types.ts'
export type { OpenAiWarning, OpenAiWarningCode } from './warnings.ts'
