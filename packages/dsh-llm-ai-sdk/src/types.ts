/** The options of `fromAiSdk` and the notices the adapter reports. */
import type { SharedV3ProviderOptions } from '@ai-sdk/provider'

/** Closed: what a notice is about. */
export type AiSdkNoticeCode =
  /** The provider package reported a setting or feature it does not support (its call warnings). */
  | 'PROVIDER_WARNING'
  /** A dsh call option this provider cannot take (e.g. `reasoningEffort` on Mistral); it was not sent. */
  | 'UNSUPPORTED_OPTION'
  /** A stream part dsh has no block for (a file, a source, a provider-executed tool); it was left out. */
  | 'UNSUPPORTED_PART'

/** One notice: its code, and a message naming the provider, model and what was left out. */
export interface AiSdkNotice {
  readonly code: AiSdkNoticeCode
  readonly message: string
}

/** Options of `fromAiSdk`. Every field is optional. */
export interface AiSdkAdapterOptions {
  /**
   * Provider options merged over what the adapter derives from the request (reasoning effort, cache
   * breakpoints), per provider key — e.g. `{anthropic: {thinking: {type: 'enabled', budgetTokens: 4000}}}`.
   */
  readonly providerOptions?: SharedV3ProviderOptions
  /** Extra HTTP headers sent with every call. */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * The provider options key this model reads (`anthropic`, `google`, `bedrock`, `openai`,
   * `mistral`). Default: derived from `model.provider` (`anthropic.messages` → `anthropic`,
   * `amazon-bedrock` → `bedrock`, `google.generative-ai` → `google`).
   */
  readonly providerKey?: string
  /** Receives every notice. Default: `process.emitWarning` with type `DshAiSdkNotice`. */
  readonly onNotice?: (notice: AiSdkNotice) => void
}
