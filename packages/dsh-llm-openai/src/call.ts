/** One streaming call: post the body, read the event stream, turn every outcome into chunks. */
import {
  LlmError,
  LlmErrorCode,
  type LlmFailure,
  type LlmRequest,
  llmFailure,
  type StreamChunk,
} from 'dsh-llm'
import { type CallContext, thrownFailure, where } from './errors.ts'
import { CallGuard } from './guard.ts'
import { httpFailure } from './http-errors.ts'
import { type BodyPolicy, buildChatBody } from './request.ts'
import { headerRequestId } from './request-id.ts'
import { type SseEvent, SseParser } from './sse.ts'
import { ChatStreamMapper } from './stream.ts'
import type { OpenAiWarning } from './warnings.ts'

/** Everything a call needs, resolved once by the factory. */
export interface CallConfig {
  /** The provider's name in messages: `options.name`, else the base URL. */
  readonly label: string
  readonly url: string
  readonly headers: readonly (readonly [string, string])[]
  readonly timeoutMs: number
  readonly fetch: typeof fetch
  readonly policy: BodyPolicy
  readonly extraBody: Readonly<Record<string, unknown>> | undefined
  readonly warn: (warning: OpenAiWarning) => void
}

/** The terminal chunk for a failure: `aborted` for `ABORTED`, `error` for everything else. */
export function failureFinish(failure: LlmFailure): StreamChunk {
  return failure.code === LlmErrorCode.ABORTED
    ? { type: 'finish', reason: { kind: 'aborted', failure } }
    : { type: 'finish', reason: { kind: 'error', failure } }
}

/**
 * Streams one request. Never throws: every failure — an unmappable request, HTTP status, transport
 * error, timeout, abort, malformed stream — ends the stream with one `finish` chunk carrying it, after
 * whatever chunks were already produced. Stopping iteration early aborts the HTTP request.
 */
export async function* streamCall(
  request: LlmRequest,
  config: CallConfig,
): AsyncGenerator<StreamChunk, void> {
  const signal = request.signal
  const context: CallContext = {
    label: config.label,
    model: request.model,
    url: config.url,
    timeoutMs: config.timeoutMs,
  }
  if (signal?.aborted === true) {
    yield failureFinish(thrownFailure(signal.reason, 'aborted', context))
    return
  }
  let body: string
  try {
    const mapped = buildChatBody(request, config.policy)
    body = JSON.stringify(config.extraBody === undefined ? mapped : { ...mapped, ...config.extraBody })
  } catch (error) {
    yield failureFinish(
      error instanceof LlmError
        ? error.failure
        : llmFailure(LlmErrorCode.INVALID_REQUEST, `request body: ${String(error)}`),
    )
    return
  }
  const guard = new CallGuard(signal, config.timeoutMs)
  try {
    guard.arm()
    let response: Response
    try {
      response = await config.fetch(config.url, {
        method: 'POST',
        headers: new Headers(config.headers.map(([name, value]) => [name, value])),
        body,
        signal: guard.signal,
      })
    } catch (error) {
      yield failureFinish(thrownFailure(error, guard.cause, context))
      return
    }
    const requestId = headerRequestId(response.headers)
    const requestContext = { ...context, requestId }
    const contentType = response.headers.get('content-type') ?? ''
    if (!response.ok || response.body === null || contentType.startsWith('application/json')) {
      let text = ''
      try {
        guard.arm()
        text = await response.text()
      } catch (error) {
        if (guard.cause !== undefined) {
          yield failureFinish(thrownFailure(error, guard.cause, requestContext))
          return
        }
      }
      yield failureFinish(
        response.ok
          ? llmFailure(
              LlmErrorCode.MALFORMED_RESPONSE,
              `${where(context)}: ${config.url} answered ${response.status} with ${contentType || 'no content type'} instead of an event stream`,
              { status: response.status, requestId },
            )
          : httpFailure(response, text, requestContext),
      )
      return
    }
    const mapper = new ChatStreamMapper({ call: context, headerRequestId: requestId, warn: config.warn })
    yield* readEvents(response.body.getReader(), mapper, guard, context)
  } finally {
    guard.dispose()
  }
}

/**
 * Reads the body to its end. The answer is complete once a `finish_reason` arrived; after that a
 * `[DONE]`, a clean end, a dropped socket or a stall all end it normally. Before it, only `[DONE]`
 * ends the protocol properly; a clean end, a dropped socket or a stall past `timeoutMs` is a
 * retryable failure, and no tool call that was still streaming gets a `block-end`.
 */
async function* readEvents(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  mapper: ChatStreamMapper,
  guard: CallGuard,
  context: CallContext,
): AsyncGenerator<StreamChunk, void> {
  const parser = new SseParser()
  const events: SseEvent[] = []
  const out: StreamChunk[] = []
  let count = 0
  for (;;) {
    let read: Awaited<ReturnType<typeof reader.read>> | undefined
    let readError: unknown
    if (guard.cause === undefined) {
      try {
        guard.arm()
        read = await reader.read()
        guard.disarm()
      } catch (error) {
        readError = error
      }
    }
    if (read === undefined) {
      // The body broke off: the caller aborted, the stall timer fired, or the socket died.
      const failure =
        guard.cause !== 'aborted' && mapper.finished
          ? mapper.complete(true, count, out)
          : thrownFailure(readError, guard.cause, { ...context, requestId: mapper.requestId })
      if (!mapper.finished) mapper.pushUsage(out)
      yield* drain(out, failure)
      return
    }
    if (read.done) parser.end(events)
    else parser.push(read.value, events)
    let failure: LlmFailure | undefined
    let done = false
    for (const event of events) {
      if (failure !== undefined || done) break
      count++
      if (event.data === '[DONE]') done = true
      else failure = acceptData(mapper, event.data, count, out)
    }
    events.length = 0
    if (failure !== undefined) mapper.pushUsage(out)
    else if (done || read.done) failure = mapper.complete(done, count, out)
    yield* drain(out, failure)
    if (done || read.done || failure !== undefined) return
  }
}

function* drain(out: StreamChunk[], failure: LlmFailure | undefined): Generator<StreamChunk, void> {
  for (const chunk of out) yield chunk
  out.length = 0
  if (failure !== undefined) yield failureFinish(failure)
}

function acceptData(
  mapper: ChatStreamMapper,
  data: string,
  event: number,
  out: StreamChunk[],
): LlmFailure | undefined {
  let payload: unknown
  try {
    payload = JSON.parse(data)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return mapper.malformed(`SSE event ${event} is not valid JSON: ${reason}`)
  }
  return mapper.accept(payload, event, out)
}
