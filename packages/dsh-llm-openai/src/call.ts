/** One streaming call: post the body, read the event stream, turn every outcome into chunks. */
import {
  LlmError,
  LlmErrorCode,
  type LlmFailure,
  type LlmRequest,
  llmFailure,
  type StreamChunk,
} from 'dsh-llm'
import { httpFailure, thrownFailure } from './errors.ts'
import { CallGuard } from './guard.ts'
import { type BodyPolicy, buildChatBody } from './request.ts'
import { type SseEvent, SseParser } from './sse.ts'
import { ChatStreamMapper } from './stream.ts'

/** Everything a call needs, resolved once by the factory. */
export interface CallConfig {
  readonly url: string
  readonly headers: readonly (readonly [string, string])[]
  readonly timeoutMs: number
  readonly fetch: typeof fetch
  readonly policy: BodyPolicy
  readonly extraBody: Readonly<Record<string, unknown>> | undefined
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
  const context = { url: config.url, timeoutMs: config.timeoutMs }
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
    const headerRequestId = response.headers.get('x-request-id') ?? undefined
    const requestContext = { ...context, requestId: headerRequestId }
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
              `${config.url} answered ${response.status} with ${contentType || 'no content type'} instead of an event stream`,
              { status: response.status, requestId: headerRequestId },
            )
          : httpFailure(response.status, response.statusText, response.headers, text),
      )
      return
    }
    yield* readEvents(response.body.getReader(), new ChatStreamMapper(headerRequestId), guard, context)
  } finally {
    guard.dispose()
  }
}

async function* readEvents(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  mapper: ChatStreamMapper,
  guard: CallGuard,
  context: { readonly url: string; readonly timeoutMs: number },
): AsyncGenerator<StreamChunk, void> {
  const parser = new SseParser()
  const events: SseEvent[] = []
  const out: StreamChunk[] = []
  let count = 0
  for (;;) {
    if (guard.cause !== undefined) {
      yield failureFinish(thrownFailure(undefined, guard.cause, { ...context, requestId: mapper.requestId }))
      return
    }
    let read: Awaited<ReturnType<typeof reader.read>>
    try {
      guard.arm()
      read = await reader.read()
      guard.disarm()
    } catch (error) {
      yield failureFinish(thrownFailure(error, guard.cause, { ...context, requestId: mapper.requestId }))
      return
    }
    if (read.done) parser.end(events)
    else parser.push(read.value, events)
    let failure: LlmFailure | undefined
    let done = read.done
    for (const event of events) {
      if (failure !== undefined || done) break
      count++
      if (event.data === '[DONE]') done = true
      else failure = acceptData(mapper, event.data, count, out)
    }
    events.length = 0
    if (done && failure === undefined) failure = mapper.complete(count, out)
    for (const chunk of out) yield chunk
    out.length = 0
    if (failure !== undefined) yield failureFinish(failure)
    if (done || failure !== undefined) return
  }
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
    return llmFailure(LlmErrorCode.MALFORMED_RESPONSE, `SSE event ${event} is not valid JSON: ${reason}`, {
      requestId: mapper.requestId,
    })
  }
  return mapper.accept(payload, event, out)
}
