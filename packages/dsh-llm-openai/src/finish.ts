/** `finish_reason` strings become dsh finish reasons; an unknown one is an error, never a stop. */
import { type FinishReason, LlmErrorCode, llmFailure } from 'dsh-llm'
import { type CallContext, OpenAiErrorCode, where } from './errors.ts'

declare module 'dsh-llm' {
  interface FinishReasonMap {
    /**
     * The model refused (OpenAI's `refusal` field). The refusal text is also the message's text
     * block, so the model sees it in later requests; here the app can tell a refusal from an answer.
     */
    refusal: { readonly kind: 'refusal'; readonly refusal: string }
  }
}

/**
 * Maps a non-empty `finish_reason` (`""` and `null` mean "not yet" and never reach here):
 * `stop`, `eos`, `eos_token`, `stop_sequence`, `end_turn` → `stop`; `tool_calls`, `function_call` →
 * `tool-calls`; `length`, `max_tokens` → `max-tokens`; `content_filter` → error `CONTENT_FILTERED`;
 * `insufficient_system_resource` → error `SERVER`; anything else → error `UNKNOWN_FINISH_REASON`.
 * Every error keeps the provider's string as `providerCode` and names provider and model.
 */
export function mapFinishReason(reason: string, context: CallContext): FinishReason {
  switch (reason) {
    case 'stop':
    case 'eos':
    case 'eos_token':
    case 'stop_sequence':
    case 'end_turn':
      return { kind: 'stop' }
    case 'tool_calls':
    case 'function_call':
      return { kind: 'tool-calls' }
    case 'length':
    case 'max_tokens':
      return { kind: 'max-tokens' }
    case 'content_filter':
      return error(
        OpenAiErrorCode.CONTENT_FILTERED,
        reason,
        `${where(context)} stopped the output (finish_reason content_filter)`,
        context,
      )
    case 'insufficient_system_resource':
      return error(
        LlmErrorCode.SERVER,
        reason,
        `${where(context)} interrupted the output (finish_reason insufficient_system_resource)`,
        context,
      )
    default:
      return error(
        OpenAiErrorCode.UNKNOWN_FINISH_REASON,
        reason,
        `${where(context)} ended the output with finish_reason ${JSON.stringify(reason)}, which this adapter does not know`,
        context,
      )
  }
}

function error(code: string, providerCode: string, message: string, context: CallContext): FinishReason {
  return {
    kind: 'error',
    failure: llmFailure(code, message, { requestId: context.requestId, providerCode }),
  }
}
