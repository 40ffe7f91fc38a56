/** The model-request span: wraps one `llm/stream` call and records what its chunks say. */
import { type Context, type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api'
import { type ContentBlock, type LlmRequest, redact, type StreamChunk, type Usage } from 'dsh-llm'
import { Dsh, GenAi, Operation } from './attributes.ts'
import { inputMessages, outputMessages, systemInstructions } from './content.ts'

/** Where in a session a request was made, when it was made by the loop. */
export interface RequestPosition {
  readonly sessionId: string
  readonly turn?: number
  readonly step?: number
  readonly logLength?: number
}

/** How one chat span is started. */
export interface ChatSpanInput {
  readonly tracer: Tracer
  readonly parent: Context
  readonly request: LlmRequest
  readonly position: RequestPosition | undefined
  readonly captureContent: boolean
}

function startChat({ tracer, parent, request, position, captureContent }: ChatSpanInput): Span {
  const span = tracer.startSpan(
    `${Operation.CHAT} ${request.model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [GenAi.OPERATION_NAME]: Operation.CHAT,
        [GenAi.PROVIDER_NAME]: request.provider,
        [GenAi.REQUEST_MODEL]: request.model,
      },
    },
    parent,
  )
  if (request.temperature !== undefined) span.setAttribute(GenAi.REQUEST_TEMPERATURE, request.temperature)
  if (request.maxTokens !== undefined) span.setAttribute(GenAi.REQUEST_MAX_TOKENS, request.maxTokens)
  if (request.stop !== undefined) span.setAttribute(GenAi.REQUEST_STOP_SEQUENCES, [...request.stop])
  if (position !== undefined) {
    span.setAttribute(GenAi.CONVERSATION_ID, position.sessionId)
    span.setAttribute(Dsh.SESSION_ID, position.sessionId)
    if (position.turn !== undefined) span.setAttribute(Dsh.TURN, position.turn)
    if (position.step !== undefined) span.setAttribute(Dsh.STEP, position.step)
    if (position.logLength !== undefined) span.setAttribute(Dsh.REQUEST_LOG_LENGTH, position.logLength)
  }
  if (captureContent) {
    if (request.system !== undefined)
      span.setAttribute(GenAi.SYSTEM_INSTRUCTIONS, redact(systemInstructions(request.system)))
    span.setAttribute(GenAi.INPUT_MESSAGES, redact(inputMessages(request.messages)))
  }
  return span
}

function recordUsage(span: Span, usage: Usage): void {
  // dsh counts are disjoint (inputTokens excludes cache reads and writes); the convention's input
  // count includes them.
  const cacheRead = usage.cacheReadTokens ?? 0
  const cacheWrite = usage.cacheWriteTokens ?? 0
  span.setAttribute(GenAi.USAGE_INPUT_TOKENS, usage.inputTokens + cacheRead + cacheWrite)
  span.setAttribute(GenAi.USAGE_OUTPUT_TOKENS, usage.outputTokens)
  if (usage.cacheReadTokens !== undefined) span.setAttribute(GenAi.USAGE_CACHE_READ_INPUT_TOKENS, cacheRead)
  if (usage.cacheWriteTokens !== undefined)
    span.setAttribute(GenAi.USAGE_CACHE_CREATION_INPUT_TOKENS, cacheWrite)
  if (usage.reasoningTokens !== undefined) {
    span.setAttribute(GenAi.USAGE_REASONING_OUTPUT_TOKENS, usage.reasoningTokens)
  }
}

function recordFinish(span: Span, chunk: Extract<StreamChunk, { type: 'finish' }>): void {
  const reason = chunk.reason
  span.setAttribute(GenAi.RESPONSE_FINISH_REASONS, [reason.kind])
  if ((reason.kind === 'error' || reason.kind === 'aborted') && 'failure' in reason) {
    span.setAttribute(GenAi.ERROR_TYPE, reason.failure.code)
    span.setStatus({ code: SpanStatusCode.ERROR, message: redact(reason.failure.message) })
  }
}

/**
 * Passes `chunks` through unchanged inside a `chat {model}` client span. The span ends when the stream
 * ends, throws, or its consumer stops. `gen_ai.response.model` is the requested model: dsh's stream
 * protocol does not carry the provider's echo of it, and the assistant message is attributed to the
 * requested model too. A thrown error sets `error.type` to its `code` (or its name) and is rethrown.
 */
export async function* chatSpan(
  input: ChatSpanInput,
  chunks: AsyncIterable<StreamChunk>,
): AsyncIterable<StreamChunk> {
  const span = startChat(input)
  span.setAttribute(GenAi.RESPONSE_MODEL, input.request.model)
  const blocks: ContentBlock[] = []
  try {
    for await (const chunk of chunks) {
      if (chunk.type === 'usage') recordUsage(span, chunk.usage)
      else if (chunk.type === 'block-end') blocks.push(chunk.block)
      else if (chunk.type === 'finish') {
        recordFinish(span, chunk)
        if (input.captureContent)
          span.setAttribute(GenAi.OUTPUT_MESSAGES, redact(outputMessages(blocks, chunk.reason.kind)))
      }
      yield chunk
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code
    span.setAttribute(GenAi.ERROR_TYPE, typeof code === 'string' ? code : (error as Error).name)
    span.setStatus({ code: SpanStatusCode.ERROR, message: redact(String((error as Error).message)) })
    throw error
  } finally {
    span.end()
  }
}
