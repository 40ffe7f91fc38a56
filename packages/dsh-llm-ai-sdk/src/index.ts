export { fromAiSdk, providerKeyOf } from './adapter.ts'
export { AiSdkErrorCode, MAX_RETRY_AFTER_MS, REQUEST_ID_HEADERS } from './errors.ts'
export { THINKING_BUDGET } from './reasoning.ts'
export type { AiSdkAdapterOptions, AiSdkNotice, AiSdkNoticeCode } from './types.ts'
