/** `fromAiSdk`: any AI SDK `LanguageModelV3` as a dsh `LlmAdapter`. */
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { HarnessError, type LlmAdapter, LlmErrorCode } from 'dsh-llm'
import { defaultNotice } from './notices.ts'
import { streamCall } from './stream.ts'
import type { AiSdkAdapterOptions } from './types.ts'

/**
 * Wraps an AI SDK model object (`anthropic('claude-sonnet-4-5')`, `google('gemini-2.5-pro')`,
 * `bedrock(...)`, `openai.responses(...)`, `mistral(...)`, any community provider implementing
 * `LanguageModelV3`) as an `LlmAdapter`. The request's `provider` and `model` name the call in the
 * log; the model object decides where it goes.
 *
 * The adapter keeps the `LlmAdapter` failure contract strictly: `stream` never throws; a request it
 * cannot map, a provider error (thrown by `doStream` or sent as an `error` part), a cut stream or an
 * abort each end the stream with one `finish` of kind `error` (or `aborted` when `request.signal`
 * fired), whose failure carries a dsh code, the HTTP status, `Retry-After` and the request id.
 * Replay metadata (signatures, redacted reasoning, item ids) arrives on each block's `block-end` as
 * `providerData` and goes back verbatim as the parts' `providerOptions`.
 *
 * Throws `HarnessError` `INVALID_OPTIONS` when `model` is not a V3 language model (its
 * `specificationVersion` is not `'v3'` or it has no `doStream`) or an option has the wrong type.
 */
export function fromAiSdk(model: LanguageModelV3, options: AiSdkAdapterOptions = {}): LlmAdapter {
  if (typeof model !== 'object' || model === null || typeof model.doStream !== 'function') {
    throw invalid('model must be an AI SDK LanguageModelV3 object (with doStream)')
  }
  if (model.specificationVersion !== 'v3') {
    throw invalid(
      `model ${model.provider} ${model.modelId} implements specification ${JSON.stringify(model.specificationVersion)}; this adapter needs 'v3' (@ai-sdk/provider 3.x packages)`,
    )
  }
  const notice = options.onNotice ?? defaultNotice
  if (typeof notice !== 'function') throw invalid('onNotice must be a function')
  const providerKey = options.providerKey ?? providerKeyOf(model.provider)
  if (typeof providerKey !== 'string' || providerKey === '')
    throw invalid('providerKey must be a non-empty string')
  const config = {
    model,
    prompt: {
      providerKey,
      label: `${model.provider} model ${model.modelId}`,
      providerOptions: options.providerOptions,
      headers: options.headers,
      notice,
    },
  }
  return { stream: (request) => streamCall(request, config) }
}

/**
 * The provider options key of a V3 provider id: its first dot-separated segment, with
 * `amazon-bedrock` read as `bedrock` (`anthropic.messages` → `anthropic`, `google.generative-ai` →
 * `google`, `openai.responses` → `openai`, `mistral.chat` → `mistral`).
 */
export function providerKeyOf(provider: string): string {
  const first = String(provider).split('.')[0] ?? ''
  return first === 'amazon-bedrock' ? 'bedrock' : first
}

function invalid(message: string): HarnessError {
  return new HarnessError(LlmErrorCode.INVALID_OPTIONS, `fromAiSdk: ${message}`)
}
