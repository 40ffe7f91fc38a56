/** Stream mapping: parsed Chat Completions chunks become dsh `StreamChunk`s. */
import {
  CallId,
  type FinishReason,
  isRecord,
  LlmErrorCode,
  type LlmFailure,
  llmFailure,
  type StreamChunk,
  type Usage,
} from 'dsh-llm'
import { type PieceKind, readContent } from './content-parts.ts'
import { type CallContext, where } from './errors.ts'
import { mapFinishReason } from './finish.ts'
import { type JsonRecord, numberField, stringField } from './json.ts'
import { mapUsage } from './usage.ts'
import type { OpenAiWarning, OpenAiWarningCode } from './warnings.ts'

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

/** What the mapper needs from its call: where it goes (for messages) and where warnings go. */
export interface MapperContext {
  readonly call: Omit<CallContext, 'requestId'>
  readonly headerRequestId: string | undefined
  readonly warn: (warning: OpenAiWarning) => void
}

/**
 * Maps one streamed completion (choice 0) to dsh chunks, linearly in the number of deltas.
 *
 * Every block gets its own dsh `index`, in order of first appearance. Text (a `content` string or
 * text parts), reasoning (`reasoning_content`, `reasoning`, or thinking parts) and refusals (shown as
 * text) extend the open block of their kind; a switch of kind, or the first delta of a tool call,
 * ends it. Only a non-empty `finish_reason` ends the choice (`""` and `null` mean "not yet"); after
 * it, deltas of choice 0 are ignored but `usage` is still read. Choices other than 0 are ignored with
 * one `EXTRA_CHOICES` warning.
 */
export class ChatStreamMapper {
  readonly #context: MapperContext
  #completionId: string | undefined
  #nextIndex = 0
  #open: OpenTextBlock | undefined
  /** Tool calls by their provider `index`. */
  readonly #tools = new Map<number, OpenToolBlock>()
  readonly #byId = new Map<string, OpenToolBlock>()
  readonly #toolOrder: OpenToolBlock[] = []
  #refusal = ''
  #finish: FinishReason | undefined
  #usage: Usage | undefined
  #usageSent = false
  readonly #warned = new Set<OpenAiWarningCode>()

  constructor(context: MapperContext) {
    this.#context = context
  }

  /** The request id failures should carry: the header's, else the streamed completion id. */
  get requestId(): string | undefined {
    return this.#context.headerRequestId ?? this.#completionId
  }

  /** True once a non-empty `finish_reason` arrived: the answer is complete, whatever follows. */
  get finished(): boolean {
    return this.#finish !== undefined
  }

  /**
   * Maps one `data:` payload (`event` is its 1-based position, for messages), appending chunks to `out`.
   * Returns a failure — and then the stream must end with it — for a payload of the wrong shape, an
   * in-band `error` object, or a tool call without a name at its end.
   */
  accept(payload: unknown, event: number, out: StreamChunk[]): LlmFailure | undefined {
    if (!isRecord(payload)) return this.malformed(`SSE event ${event} is not a JSON object`)
    if (payload.error !== undefined && payload.error !== null) return this.#inBandError(payload.error)
    const id = stringField(payload.id)
    if (id !== undefined && id !== '') this.#completionId = id
    const usage = isRecord(payload.usage) ? payload.usage : groqUsage(payload)
    if (usage !== undefined) this.#usage = mapUsage(usage) ?? this.#usage
    const choices = payload.choices
    if (choices === undefined || choices === null) return undefined
    if (!Array.isArray(choices)) return this.malformed(`SSE event ${event}: 'choices' is not an array`)
    for (const choice of choices) {
      if (!isRecord(choice)) return this.malformed(`SSE event ${event}: a choice is not an object`)
      const index = numberField(choice.index) ?? 0
      if (index !== 0) {
        this.#warnOnce(
          'EXTRA_CHOICES',
          `${this.#where()} sent choice ${index}; only choice 0 is used (n > 1 is not supported)`,
        )
        continue
      }
      if (this.#finish !== undefined) continue
      const failure = this.#acceptChoice(choice, event, out)
      if (failure !== undefined) return failure
    }
    return undefined
  }

  /**
   * Ends the stream. `protocolEnded` says whether `[DONE]` arrived. Appends `usage` (when one was
   * reported) and returns the failure to end with, or appends `finish` and returns `undefined`:
   * - no `finish_reason` and no `[DONE]`: a retryable `TRANSPORT` failure — the answer is incomplete;
   * - no `finish_reason` but `[DONE]`: the choice ends here, as `tool-calls` if it called tools, else `stop`;
   * - an error finish reason: that failure;
   * - a `stop`/`tool-calls` answer with no text, reasoning, refusal or tool call: `EMPTY_RESPONSE`.
   */
  complete(protocolEnded: boolean, events: number, out: StreamChunk[]): LlmFailure | undefined {
    if (this.#finish === undefined) {
      if (!protocolEnded) {
        this.pushUsage(out)
        return llmFailure(
          LlmErrorCode.TRANSPORT,
          `${this.#where()}: the stream ended after ${events} SSE events with neither a finish_reason nor [DONE]; the answer is incomplete`,
          { requestId: this.requestId },
        )
      }
      const failure = this.#end(this.#toolOrder.length > 0 ? { kind: 'tool-calls' } : { kind: 'stop' }, out)
      if (failure !== undefined) return failure
    }
    const finish = this.#finish ?? { kind: 'stop' }
    this.pushUsage(out)
    if (finish.kind === 'error') return finish.failure
    if ((finish.kind === 'stop' || finish.kind === 'tool-calls') && this.#nextIndex === 0) {
      return llmFailure(
        LlmErrorCode.EMPTY_RESPONSE,
        `${this.#where()} answered with no text, no reasoning and no tool call (finish ${finish.kind})`,
        { requestId: this.requestId },
      )
    }
    out.push({ type: 'finish', reason: finish })
    return undefined
  }

  /** Appends the last reported `usage`, once, so a failure after partial output keeps what was paid. */
  pushUsage(out: StreamChunk[]): void {
    if (this.#usage === undefined || this.#usageSent) return
    this.#usageSent = true
    out.push({ type: 'usage', usage: this.#usage })
  }

  #acceptChoice(choice: JsonRecord, event: number, out: StreamChunk[]): LlmFailure | undefined {
    const delta = isRecord(choice.delta) ? choice.delta : {}
    const reasoning = stringField(delta.reasoning_content) ?? stringField(delta.reasoning)
    if (reasoning !== undefined) this.#appendText('reasoning', reasoning, out)
    const emit = (kind: PieceKind, text: string) => this.#appendPiece(kind, text, out)
    readContent(delta.content, emit, (type) =>
      this.#warnOnce(
        'UNKNOWN_CONTENT_PART',
        `${this.#where()} sent a '${type}' content part, which this adapter cannot map; it was left out`,
      ),
    )
    const refusal = stringField(delta.refusal)
    if (refusal !== undefined) this.#appendPiece('refusal', refusal, out)
    if (Array.isArray(delta.tool_calls)) {
      for (let position = 0; position < delta.tool_calls.length; position++) {
        const entry: unknown = delta.tool_calls[position]
        if (!isRecord(entry)) return this.malformed(`SSE event ${event}: a tool_calls entry is not an object`)
        this.#toolDelta(entry, out)
      }
    }
    const reason = stringField(choice.finish_reason)
    if (reason === undefined || reason === '') return undefined
    const context = { ...this.#context.call, requestId: this.requestId }
    return this.#end(mapFinishReason(reason, context), out)
  }

  #appendPiece(kind: PieceKind, text: string, out: StreamChunk[]): void {
    if (kind !== 'refusal') {
      this.#appendText(kind, text, out)
      return
    }
    this.#refusal += text
    this.#appendText('text', text, out)
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

  /**
   * One `tool_calls` entry. A call is found by its `index`, unless the entry carries a different id
   * (a new call reusing the index); without `index`, by its id; with neither, it continues the latest
   * call. A new call without an id gets a generated one (`<completion id>-tool-<n>`).
   */
  #toolDelta(entry: JsonRecord, out: StreamChunk[]): void {
    const fn = isRecord(entry.function) ? entry.function : {}
    const name = stringField(fn.name) ?? ''
    const args = stringField(fn.arguments) ?? ''
    const id = stringField(entry.id) ?? ''
    const key = numberField(entry.index)
    let tool =
      key !== undefined ? this.#tools.get(key) : id !== '' ? this.#byId.get(id) : this.#toolOrder.at(-1)
    if (tool !== undefined && id !== '' && id !== tool.id) tool = undefined
    if (tool === undefined) {
      this.#endOpen(out)
      const callId = id !== '' ? id : `${this.#completionId ?? 'call'}-tool-${this.#toolOrder.length}`
      tool = { index: this.#nextIndex++, id: CallId(callId), name, args }
      if (key !== undefined) this.#tools.set(key, tool)
      this.#byId.set(callId, tool)
      this.#toolOrder.push(tool)
      out.push({ type: 'block-start', index: tool.index, blockType: 'tool-call' })
      out.push(toolDeltaChunk(tool, name, args))
      return
    }
    const announce = tool.name === '' && name !== '' ? name : ''
    if (announce !== '') tool.name = announce
    if (args.length === 0 && announce === '') return
    tool.args += args
    out.push(toolDeltaChunk(tool, announce, args))
  }

  /**
   * Records the finish reason. A normal one ends every block (tool calls first: the open text block,
   * if any, opened after them); an error leaves the blocks open, as any failure partway does.
   */
  #end(reason: FinishReason, out: StreamChunk[]): LlmFailure | undefined {
    if (reason.kind === 'error') {
      this.#finish = reason
      return undefined
    }
    for (const tool of this.#toolOrder) {
      if (tool.name === '') return this.malformed(`tool call ${tool.id} ended without a function name`)
    }
    for (const tool of this.#toolOrder) {
      out.push({
        type: 'block-end',
        index: tool.index,
        block: { type: 'tool-call', id: tool.id, name: tool.name, arguments: tool.args },
      })
    }
    this.#endOpen(out)
    this.#finish =
      reason.kind === 'stop' && this.#refusal !== '' ? { kind: 'refusal', refusal: this.#refusal } : reason
    return undefined
  }

  #endOpen(out: StreamChunk[]): void {
    const block = this.#open
    if (block === undefined) return
    this.#open = undefined
    out.push({ type: 'block-end', index: block.index, block: { type: block.kind, text: block.text } })
  }

  #inBandError(error: unknown): LlmFailure {
    const record = isRecord(error) ? error : {}
    const message = stringField(record.message) ?? stringField(error)
    const code = stringField(record.code) ?? stringField(record.type)
    return llmFailure(
      LlmErrorCode.SERVER,
      `${this.#where()}: error event${code === undefined ? '' : ` ${code}`}: ${message ?? '(no message)'}`,
      { requestId: this.requestId, providerCode: code },
    )
  }

  /** A `MALFORMED_RESPONSE` failure whose message names the provider and model. */
  malformed(message: string): LlmFailure {
    return llmFailure(LlmErrorCode.MALFORMED_RESPONSE, `${this.#where()}: ${message}`, {
      requestId: this.requestId,
    })
  }

  #where(): string {
    return where({ ...this.#context.call, requestId: this.requestId })
  }

  #warnOnce(code: OpenAiWarningCode, message: string): void {
    if (this.#warned.has(code)) return
    this.#warned.add(code)
    const requestId = this.requestId
    this.#context.warn(requestId === undefined ? { code, message } : { code, message, requestId })
  }
}

/** Groq reports streamed usage in `x_groq.usage` of the last chunk instead of `usage`. */
function groqUsage(payload: JsonRecord): JsonRecord | undefined {
  const groq = payload.x_groq
  return isRecord(groq) && isRecord(groq.usage) ? groq.usage : undefined
}

function toolDeltaChunk(tool: OpenToolBlock, name: string, args: string): StreamChunk {
  return name === ''
    ? { type: 'tool-call-delta', index: tool.index, id: tool.id, argumentsDelta: args }
    : { type: 'tool-call-delta', index: tool.index, id: tool.id, name, argumentsDelta: args }
}
