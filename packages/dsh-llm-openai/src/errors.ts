/** The adapter's failure vocabulary, its call context, and thrown transport errors as `LlmFailure`s. */
import { assertNever, isRecord, LlmErrorCode, type LlmFailure, llmFailure } from 'dsh-llm'
import { numberField, stringField } from './json.ts'

/** Codes this package adds to `LlmErrorCode`. */
export const OpenAiErrorCode = {
  /** The provider withheld or cut the output (`finish_reason: "content_filter"`). */
  CONTENT_FILTERED: 'CONTENT_FILTERED',
  /** The provider ended the output with a `finish_reason` this adapter does not know (kept as `providerCode`). */
  UNKNOWN_FINISH_REASON: 'UNKNOWN_FINISH_REASON',
} as const

/** Where a call goes, for messages: the provider label, the model, the endpoint and the timeout. */
export interface CallContext {
  /** The provider's name: `options.name`, else the base URL. */
  readonly label: string
  readonly model: string
  readonly url: string
  readonly timeoutMs: number
  readonly requestId?: string | undefined
}

/** `"<label> (model <model>)"`: how every failure message of a call begins. */
export function where(context: CallContext): string {
  return `${context.label} (model ${context.model})`
}

/** Why a call's controller fired, if it did. */
export type CallCause = 'aborted' | 'timeout' | undefined

/**
 * Maps an exception thrown by `fetch` or a body read: the caller's abort becomes `ABORTED`, the
 * inactivity timer `TIMEOUT`, anything else `TRANSPORT` with the error's message and its cause's.
 * Every message names the provider and model; the failure carries the request id when known.
 */
export function thrownFailure(error: unknown, cause: CallCause, context: CallContext): LlmFailure {
  const extra = { requestId: context.requestId }
  switch (cause) {
    case 'aborted':
      return llmFailure(
        LlmErrorCode.ABORTED,
        `${where(context)}: the request to ${context.url} was aborted by its signal`,
        extra,
      )
    case 'timeout':
      return llmFailure(
        LlmErrorCode.TIMEOUT,
        `${where(context)}: no data from ${context.url} for ${context.timeoutMs} ms (timeoutMs)`,
        extra,
      )
    case undefined:
      return llmFailure(
        LlmErrorCode.TRANSPORT,
        `${where(context)}: POST ${context.url} failed: ${describe(error)}`,
        extra,
      )
    default:
      return assertNever(cause, 'thrownFailure')
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause: unknown = error.cause
  if (cause instanceof Error && cause.message !== '' && cause.message !== error.message) {
    return `${error.message}: ${cause.message}`
  }
  const code = isRecord(cause) ? (stringField(cause.code) ?? numberField(cause.code)) : undefined
  return code === undefined ? error.message : `${error.message} (${code})`
}
