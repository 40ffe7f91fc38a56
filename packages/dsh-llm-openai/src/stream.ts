/** Stream mapping: parsed Chat Completions chunks become dsh `StreamChunk`s. */
import {
  CallId,
  type FinishReason,
  LlmErrorCode,
  type LlmFailure,
  llmFailure,
  type StreamChunk,
  type Usage,
} from 'dsh-llm'
import { OpenAiErrorCode } from './errors.ts'
import { isRecord, type JsonRecord, numberField, stringField } from './json.ts'
import { mapUsage } from './usage.ts'

interface OpenTextBlock {
  readonly kind: 'text' | 'reasoning'
  readonly index: number
  text: string
}

interface OpenToolBlock {
  readonly index: number
  readonly id: CallId
  name: string
  args: string
}

/**
 * Maps one streamed completion (choice 0) to dsh chunks, linearly in the number of deltas.
 *
 * Every block gets its own dsh `index`, in order of first appearance. Text and reasoning deltas extend
 * the open block of their kind; a switch of kind, or the first delta of a tool call, ends it. Tool
 * calls are keyed by their provider `index`; the first delta must carry the call id, and its name (or
 * the first delta that has one) is announced once. The remaining blocks end when `finish_reason`
 * arrives; `usage` (the last one reported) and `finish` follow in `complete`.
 */
export class ChatStreamMapper {
  readonly #headerRequestId: string | undefined
  #completionId: string | undefined
  #nextIndex = 0
  #open: OpenTextBlock | undefined
  readonly #tools = new Map<number, OpenToolBlock>()
  readonly #toolOrder: OpenToolBlock[] = []
  #finish: FinishReason | undefined
  #usage: Usage | undefined

  /** `headerRequestId` is the response's `x-request-id`; failures carry it (else the completion id). */
  constructor(headerRequestId: string | undefined) {
    this.#headerRequestId = headerRequestId
  }

  /** The request id failures should carry: the header's, else the streamed completion id. */
  get requestId(): string | undefined {
    return this.#headerRequestId ?? this.#completionId
  }

  /** True once a `finish_reason` arrived; deltas after it are ignored. */
  get finished(): boolean {
    return this.#finish !== undefined
  }

  /**
   * Maps one `data:` payload (`event` is its 1-based position, for messages), appending chunks to `out`.
   * Returns a failure — and then the stream must end with it — for a payload of the wrong shape, an
   * in-band `error` object, a tool call without id or name, or a provider-side abort reason.
   */
  accept(payload: unknown, event: number, out: StreamChunk[]): LlmFailure | undefined {
    if (!isRecord(payload)) return this.#malformed(`SSE event ${event} is not a JSON object`)
    if (payload.error !== undefined && payload.error !== null) return this.#inBandError(payload.error)
    const id = stringField(payload.id)
    if (id !== undefined && id !== '') this.#completionId = id
    if (isRecord(payload.usage)) this.#usage = mapUsage(payload.usage) ?? this.#usage
    const choices = payload.choices
    if (choices === undefined || choices === null) return undefined
    if (!Array.isArray(choices)) return this.#malformed(`SSE event ${event}: 'choices' is not an array`)
    for (const choice of choices) {
      if (!isRecord(choice)) return this.#malformed(`SSE event ${event}: a choice is not an object`)
      if ((numberField(choice.index) ?? 0) !== 0 || this.#finish !== undefined) continue
      const failure = this.#acceptChoice(choice, event, out)
      if (failure !== undefined) return failure
    }
    return undefined
  }

  /**
   * Ends the stream (after `[DONE]` or the end of the body): appends `usage` when one was reported, then
   * `finish`. Returns a `MALFORMED_RESPONSE` failure instead when no `finish_reason` ever arrived.
   */
  complete(events: number, out: StreamChunk[]): LlmFailure | undefined {
    if (this.#finish === undefined) {
      return this.#malformed(`the stream ended after ${events} SSE events without a finish_reason`)
    }
    if (this.#usage !== undefined) out.push({ type: 'usage', usage: this.#usage })
    out.push({ type: 'finish', reason: this.#finish })
    return undefined
  }

  #acceptChoice(choice: JsonRecord, event: number, out: StreamChunk[]): LlmFailure | undefined {
    const delta = isRecord(choice.delta) ? choice.delta : {}
    const reasoning = stringField(delta.reasoning_content) ?? stringField(delta.reasoning)
    if (reasoning !== undefined) this.#appendText('reasoning', reasoning, out)
    const text = stringField(delta.content)
    if (text !== undefined) this.#appendText('text', text, out)
    if (Array.isArray(delta.tool_calls)) {
      for (let position = 0; position < delta.tool_calls.length; position++) {
        const entry: unknown = delta.tool_calls[position]
        if (!isRecord(entry))
          return this.#malformed(`SSE event ${event}: a tool_calls entry is not an object`)
        const failure = this.#toolDelta(entry, position, event, out)
        if (failure !== undefined) return failure
      }
    }
    const reason = stringField(choice.finish_reason)
    if (reason === undefined) return undefined
    const mapped = this.#finishReason(reason)
    if (mapped.kind === 'error') return mapped.failure
    return this.#endAll(mapped, out)
  }

  #appendText(kind: 'text' | 'reasoning', text: string, out: StreamChunk[]): void {
    if (text.length === 0) return
    let block = this.#open
    if (block === undefined || block.kind !== kind) {
      this.#endOpen(out)
      block = { kind, index: this.#nextIndex++, text: '' }
      this.#open = block
      out.push({ type: 'block-start', index: block.index, blockType: kind })
    }
    block.text += text
    out.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', index: block.index, text })
  }

  #toolDelta(entry: JsonRecord, position: number, event: number, out: StreamChunk[]): LlmFailure | undefined {
    const key = numberField(entry.index) ?? position
    const fn = isRecord(entry.function) ? entry.function : {}
    const name = stringField(fn.name) ?? ''
    const args = stringField(fn.arguments) ?? ''
    let tool = this.#tools.get(key)
    if (tool === undefined) {
      const id = stringField(entry.id) ?? ''
      if (id === '') return this.#malformed(`SSE event ${event}: tool call ${key} began without an id`)
      this.#endOpen(out)
      tool = { index: this.#nextIndex++, id: CallId(id), name, args }
      this.#tools.set(key, tool)
      this.#toolOrder.push(tool)
      out.push({ type: 'block-start', index: tool.index, blockType: 'tool-call' })
      out.push(toolDeltaChunk(tool, name, args))
      return undefined
    }
    const announce = tool.name === '' && name !== '' ? name : ''
    if (announce !== '') tool.name = announce
    if (args.length === 0 && announce === '') return undefined
    tool.args += args
    out.push(toolDeltaChunk(tool, announce, args))
    return undefined
  }

  #finishReason(reason: string): FinishReason {
    switch (reason) {
      case 'stop':
        return { kind: 'stop' }
      case 'tool_calls':
      case 'function_call':
        return { kind: 'tool-calls' }
      case 'length':
        return { kind: 'max-tokens' }
      case 'content_filter':
        return this.#errorReason(
          OpenAiErrorCode.CONTENT_FILTERED,
          'the provider stopped the output (content_filter)',
        )
      case 'insufficient_system_resource':
        return this.#errorReason(
          LlmErrorCode.SERVER,
          'the provider interrupted the output (insufficient_system_resource)',
        )
      default:
        // Unknown reasons from other servers: the blocks themselves say whether tools were called.
        return this.#toolOrder.length > 0 ? { kind: 'tool-calls' } : { kind: 'stop' }
    }
  }

  #errorReason(code: string, message: string): FinishReason {
    return { kind: 'error', failure: llmFailure(code, message, { requestId: this.requestId }) }
  }

  #endAll(reason: FinishReason, out: StreamChunk[]): LlmFailure | undefined {
    // The open text block, if any, opened after every tool call: end the tool calls first.
    for (const tool of this.#toolOrder) {
      if (tool.name === '') return this.#malformed(`tool call ${tool.id} ended without a function name`)
    }
    for (const tool of this.#toolOrder) {
      out.push({
        type: 'block-end',
        index: tool.index,
        block: { type: 'tool-call', id: tool.id, name: tool.name, arguments: tool.args },
      })
    }
    this.#endOpen(out)
    this.#finish = reason
    return undefined
  }

  #endOpen(out: StreamChunk[]): void {
    const block = this.#open
    if (block === undefined) return
    this.#open = undefined
    out.push({ type: 'block-end', index: block.index, block: { type: block.kind, text: block.text } })
  }

  #inBandError(error: unknown): LlmFailure {
    const message = isRecord(error) ? stringField(error.message) : stringField(error)
    return llmFailure(LlmErrorCode.SERVER, message ?? 'the provider sent an error event without a message', {
      requestId: this.requestId,
    })
  }

  #malformed(message: string): LlmFailure {
    return llmFailure(LlmErrorCode.MALFORMED_RESPONSE, message, { requestId: this.requestId })
  }
}

function toolDeltaChunk(tool: OpenToolBlock, name: string, args: string): StreamChunk {
  return name === ''
    ? { type: 'tool-call-delta', index: tool.index, id: tool.id, argumentsDelta: args }
    : { type: 'tool-call-delta', index: tool.index, id: tool.id, name, argumentsDelta: args }
}
