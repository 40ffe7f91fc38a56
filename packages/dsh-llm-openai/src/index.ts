export { DEFAULT_TIMEOUT_MS, openAiCompatible } from './adapter.ts'
export { DEEPSEEK_BASE_URL, deepseek } from './deepseek.ts'
export { OpenAiErrorCode } from './errors.ts'
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
