/**
 * Stream mapping, the one place V3 stream parts become dsh chunks. Tolerant: parts out of order,
 * repeated ids, deltas of blocks never started and a missing finish all still end in one defined
 * `finish`, and a tool call is only ever committed whole.
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider'
import {
  CallId,
  type ContentBlock,
  type FinishReason,
  LlmErrorCode,
  type LlmFailure,
  llmFailure,
  type ProviderData,
  type StreamChunk,
} from 'dsh-llm'
import { type FailureContext, failureOf } from './errors.ts'
import { finishReasonOf, usageOf } from './finish.ts'
import { describeWarning } from './notices.ts'
import { mergeProviderData, providerDataOf } from './provider-data.ts'
import type { AiSdkNotice } from './types.ts'

type Kind = 'text' | 'reasoning' | 'tool-call'

/** A block under construction. */
interface Open {
  readonly index: number
  readonly kind: Kind
  readonly id: string
  text: string
  name: string
  data: ProviderData | undefined
}

/**
 * Maps one call's V3 parts to chunks. Each V3 block (`text-*`, `reasoning-*`, `tool-input-*` by
 * id) gets the next dsh index when first seen, with a `block-start`; a repeated start of an open id
 * is ignored; a delta of an id not open opens it; an end closes it with a `block-end` whose block
 * carries the text and the block's merged provider metadata as `providerData`. A tool call's
 * `block-end` comes from the `tool-call` part (authoritative: its `input` is the arguments), a
 * repeated `tool-call` of one id is ignored. `finish` closes open text and reasoning blocks, emits
 * one `usage` and the `finish`; if a streamed tool input never got its `tool-call` the finish is
 * instead an error `MALFORMED_RESPONSE` (a half call must not run), except after a `length` stop
 * (`max-tokens`: the assembler leaves tool calls out). An `error` part ends the stream with an
 * error finish. Nothing is emitted after the finish. `push` never throws.
 */
export class PartMapper {
  private readonly open = new Map<string, Open>()
  private readonly calls = new Set<string>()
  private readonly reported = new Set<string>()
  private nextIndex = 0
  private done = false

  constructor(
    private readonly context: FailureContext,
    private readonly notice: (notice: AiSdkNotice) => void,
  ) {}

  /** True once the finish chunk was produced. */
  get finished(): boolean {
    return this.done
  }

  /** The chunks `part` becomes (none after the finish). */
  push(part: LanguageModelV3StreamPart): StreamChunk[] {
    if (this.done) return []
    try {
      return this.map(part)
    } catch (error) {
      return this.fail(
        llmFailure(
          LlmErrorCode.MALFORMED_RESPONSE,
          `${this.context.label} sent a stream part dsh could not map: ${String(error)}`,
          {
            requestId: this.context.requestId,
          },
        ),
      )
    }
  }

  /** The end of the parts without a `finish`: an error finish `TRANSPORT` (the stream was cut). */
  end(): StreamChunk[] {
    if (this.done) return []
    return this.fail(
      llmFailure(LlmErrorCode.TRANSPORT, `${this.context.label}: the stream ended without a finish`, {
        requestId: this.context.requestId,
      }),
    )
  }

  /** A terminal error (or aborted) finish; nothing else is emitted for open blocks. */
  fail(failure: LlmFailure, aborted = false): StreamChunk[] {
    if (this.done) return []
    this.done = true
    const reason: FinishReason = aborted ? { kind: 'aborted', failure } : { kind: 'error', failure }
    return [{ type: 'finish', reason }]
  }

  private map(part: LanguageModelV3StreamPart): StreamChunk[] {
    switch (part.type) {
      case 'stream-start':
        for (const warning of part.warnings) {
          this.notice({
            code: 'PROVIDER_WARNING',
            message: `${this.context.label}: ${describeWarning(warning)}`,
          })
        }
        return []
      case 'text-start':
      case 'reasoning-start': {
        const kind = part.type === 'text-start' ? 'text' : 'reasoning'
        const out: StreamChunk[] = []
        this.touch(kind, part.id, part.providerMetadata, out)
        return out
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = part.type === 'text-delta' ? 'text' : 'reasoning'
        const out: StreamChunk[] = []
        const block = this.touch(kind, part.id, part.providerMetadata, out)
        if (typeof part.delta === 'string' && part.delta !== '') {
          block.text += part.delta
          out.push({
            type: kind === 'text' ? 'text-delta' : 'reasoning-delta',
            index: block.index,
            text: part.delta,
          })
        }
        return out
      }
      case 'text-end':
      case 'reasoning-end': {
        const kind = part.type === 'text-end' ? 'text' : 'reasoning'
        const block = this.open.get(key(kind, part.id))
        if (block === undefined) return []
        block.data = mergeProviderData(block.data, providerDataOf(part.providerMetadata))
        return [this.close(block)]
      }
      case 'tool-input-start': {
        if (part.providerExecuted === true) return this.skip('provider-executed tool call')
        const out: StreamChunk[] = []
        this.touch('tool-call', part.id, part.providerMetadata, out, part.toolName)
        return out
      }
      case 'tool-input-delta': {
        if (this.calls.has(part.id)) return []
        const out: StreamChunk[] = []
        const block = this.touch('tool-call', part.id, part.providerMetadata, out)
        if (typeof part.delta === 'string' && part.delta !== '') {
          block.text += part.delta
          out.push({ type: 'tool-call-delta', index: block.index, argumentsDelta: part.delta })
        }
        return out
      }
      case 'tool-input-end':
        return []
      case 'tool-call': {
        if (part.providerExecuted === true) return this.skip('provider-executed tool call')
        if (this.calls.has(part.toolCallId)) return []
        const out: StreamChunk[] = []
        const block = this.touch('tool-call', part.toolCallId, part.providerMetadata, out, part.toolName)
        this.calls.add(part.toolCallId)
        block.name = typeof part.toolName === 'string' ? part.toolName : block.name
        block.text = typeof part.input === 'string' ? part.input : block.text
        out.push(this.close(block))
        return out
      }
      case 'finish':
        return this.finish(part)
      case 'error':
        return this.fail(failureOf(part.error, this.context))
      case 'response-metadata':
      case 'raw':
        return []
      default:
        return this.skip(`${part.type} part`)
    }
  }

  /** The open block of `kind` and `id`, opened (with its `block-start`, into `out`) when not open. */
  private touch(
    kind: Kind,
    id: string,
    metadata: Parameters<typeof providerDataOf>[0],
    out: StreamChunk[],
    name?: string,
  ): Open {
    const k = key(kind, id)
    let block = this.open.get(k)
    if (block === undefined) {
      block = { index: this.nextIndex++, kind, id: String(id), text: '', name: name ?? '', data: undefined }
      this.open.set(k, block)
      out.push({ type: 'block-start', index: block.index, blockType: kind })
      if (kind === 'tool-call') {
        const callId = block.id === '' ? undefined : CallId(block.id)
        out.push(
          callId === undefined
            ? { type: 'tool-call-delta', index: block.index, name: block.name, argumentsDelta: '' }
            : {
                type: 'tool-call-delta',
                index: block.index,
                id: callId,
                name: block.name,
                argumentsDelta: '',
              },
        )
      }
    } else if (name !== undefined && block.name === '') {
      block.name = name
    }
    block.data = mergeProviderData(block.data, providerDataOf(metadata))
    return block
  }

  private close(block: Open): StreamChunk {
    this.open.delete(key(block.kind, block.id))
    return { type: 'block-end', index: block.index, block: blockOf(block) }
  }

  private finish(part: Extract<LanguageModelV3StreamPart, { type: 'finish' }>): StreamChunk[] {
    const out: StreamChunk[] = []
    let reason = finishReasonOf(part.finishReason, this.context)
    const halfCalls: Open[] = []
    for (const block of [...this.open.values()]) {
      if (block.kind === 'tool-call') halfCalls.push(block)
      else out.push(this.close(block))
    }
    if (halfCalls.length > 0 && reason.kind !== 'max-tokens' && reason.kind !== 'error') {
      const names = halfCalls.map((call) => `${call.name || '(unnamed)'} (${call.id})`).join(', ')
      reason = {
        kind: 'error',
        failure: llmFailure(
          LlmErrorCode.MALFORMED_RESPONSE,
          `${this.context.label} finished with tool call input never completed: ${names}`,
          { requestId: this.context.requestId },
        ),
      }
    }
    const usage = usageOf(part.usage)
    if (usage !== undefined) out.push({ type: 'usage', usage })
    out.push({ type: 'finish', reason })
    this.done = true
    return out
  }

  private skip(what: string): StreamChunk[] {
    if (!this.reported.has(what)) {
      this.reported.add(what)
      this.notice({
        code: 'UNSUPPORTED_PART',
        message: `${this.context.label}: a ${what} has no dsh block and was left out`,
      })
    }
    return []
  }
}

function key(kind: Kind, id: string): string {
  return `${kind}:${String(id)}`
}

function blockOf(block: Open): ContentBlock {
  const data = block.data
  switch (block.kind) {
    case 'text':
      return data === undefined
        ? { type: 'text', text: block.text }
        : { type: 'text', text: block.text, providerData: data }
    case 'reasoning':
      return data === undefined
        ? { type: 'reasoning', text: block.text }
        : { type: 'reasoning', text: block.text, providerData: data }
    case 'tool-call': {
      const id = CallId(block.id === '' ? `ai-sdk-call-${block.index}` : block.id)
      const base = { type: 'tool-call' as const, id, name: block.name, arguments: block.text }
      return data === undefined ? base : { ...base, providerData: data }
    }
  }
}
