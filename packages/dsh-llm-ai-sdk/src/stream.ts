/** One model call: map the request, call `doStream`, read its parts into chunks. */
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { LlmError, LlmErrorCode, type LlmRequest, llmFailure, type StreamChunk } from 'dsh-llm'
import { failureOf, headerRequestId, lowerCased } from './errors.ts'
import { PartMapper } from './parts.ts'
import { buildCallOptions, type PromptContext } from './prompt.ts'

/** What every call of one adapter shares. */
export interface CallConfig {
  readonly model: LanguageModelV3
  readonly prompt: PromptContext
}

/**
 * Streams one call. Never throws: a mapping error, a `doStream` rejection, a failed read, an abort
 * and a stream without a finish all become the one terminal `finish` (see `PartMapper`). Stopping
 * early (`return`) cancels the provider's stream.
 */
export async function* streamCall(request: LlmRequest, config: CallConfig): AsyncGenerator<StreamChunk> {
  const label = config.prompt.label
  const signal = request.signal
  const context = { label, requestId: undefined as string | undefined }
  // A function, not a narrowed expression: the signal may fire during any await below.
  const isAborted = () => signal?.aborted === true
  const aborted = () =>
    new PartMapper(context, config.prompt.notice).fail(
      llmFailure(LlmErrorCode.ABORTED, `request to ${label} aborted: ${String(signal?.reason ?? 'aborted')}`),
      true,
    )
  let options: ReturnType<typeof buildCallOptions>
  try {
    options = buildCallOptions(request, config.prompt)
  } catch (error) {
    const failure =
      error instanceof LlmError
        ? error.failure
        : llmFailure(
            LlmErrorCode.INVALID_REQUEST,
            `${label}: the request could not be mapped: ${String(error)}`,
          )
    yield { type: 'finish', reason: { kind: 'error', failure } }
    return
  }
  if (isAborted()) {
    yield* aborted()
    return
  }
  let stream: ReadableStream<LanguageModelV3StreamPart>
  try {
    const result = await config.model.doStream(options)
    context.requestId = headerRequestId(lowerCased(result.response?.headers))
    stream = result.stream
  } catch (error) {
    if (isAborted()) yield* aborted()
    else yield { type: 'finish', reason: { kind: 'error', failure: failureOf(error, context) } }
    return
  }
  const mapper = new PartMapper(context, config.prompt.notice)
  const reader = stream.getReader()
  try {
    while (!mapper.finished) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        if (isAborted()) yield* aborted()
        else yield* mapper.fail(failureOf(error, context))
        return
      }
      if (next.done) {
        yield* isAborted() ? aborted() : mapper.end()
        return
      }
      const part = next.value
      if (part.type === 'error' && isAborted()) {
        yield* aborted()
        return
      }
      for (const chunk of mapper.push(part)) yield chunk
    }
  } finally {
    reader.cancel().catch(() => undefined)
  }
}
