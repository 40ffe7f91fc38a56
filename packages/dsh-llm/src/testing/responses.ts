/** Terse builders of whole model responses (chunk lists) for scripted adapters. */
import { llmFailure } from '../errors.ts'
import { deepFreeze } from '../freeze.ts'
import { CallId } from '../ids.ts'
import type { StreamChunk, Usage } from '../stream.ts'
import type { FinishReason } from '../vocabulary.ts'

/** Options every response builder accepts. */
export interface ResponseOptions {
  /** The `usage` chunk's counts. Default `{inputTokens: 0, outputTokens: 0}`. */
  readonly usage?: Usage
  /** The `finish` reason. Default `stop` for text, `tool-calls` for tool calls. */
  readonly finish?: FinishReason
}

/** How a text is cut into deltas: explicit pieces (they must join to the text) or at word ends. */
export type Deltas = readonly string[] | 'words'

/** One tool call of `toolCallsResponse`; `args` as an object is `JSON.stringify`-ed. */
export interface ScriptedToolCall {
  readonly id: string
  readonly name: string
  readonly args: object | string
}

const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 }

function split(text: string, deltas: Deltas | undefined, where: string): readonly string[] {
  if (deltas === undefined) return text === '' ? [] : [text]
  if (deltas === 'words') return text.split(/(?<=\s)(?=\S)/).filter((part) => part !== '')
  if (deltas.join('') !== text) {
    throw new TypeError(
      `${where}: deltas join to ${JSON.stringify(deltas.join(''))}, not ${JSON.stringify(text)}`,
    )
  }
  return deltas
}

/** The chunks of one text or reasoning block at `index`: start, deltas, end. */
export function textBlockChunks(
  index: number,
  text: string,
  options: { kind?: 'text' | 'reasoning'; deltas?: Deltas } = {},
): StreamChunk[] {
  const kind = options.kind ?? 'text'
  const type = kind === 'text' ? 'text-delta' : 'reasoning-delta'
  return deepFreeze([
    { type: 'block-start', index, blockType: kind },
    ...split(text, options.deltas, 'textBlockChunks').map((part) => ({ type, index, text: part }) as const),
    { type: 'block-end', index, block: { type: kind, text } },
  ])
}

/**
 * The chunks of one tool-call block at `index`: start, the argument JSON in up to three deltas
 * (the first carries id and name), end with the complete block.
 */
export function toolCallChunks(index: number, call: ScriptedToolCall): StreamChunk[] {
  const id = CallId(call.id)
  const json = typeof call.args === 'string' ? call.args : JSON.stringify(call.args)
  const third = Math.ceil(json.length / 3)
  const parts = [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)].filter(
    (p) => p !== '',
  )
  const deltas: StreamChunk[] =
    parts.length === 0
      ? [{ type: 'tool-call-delta', index, id, name: call.name, argumentsDelta: '' }]
      : parts.map((part, i) =>
          i === 0
            ? { type: 'tool-call-delta', index, id, name: call.name, argumentsDelta: part }
            : { type: 'tool-call-delta', index, argumentsDelta: part },
        )
  return deepFreeze([
    { type: 'block-start', index, blockType: 'tool-call' },
    ...deltas,
    { type: 'block-end', index, block: { type: 'tool-call', id, name: call.name, arguments: json } },
  ])
}

function ending(options: ResponseOptions, fallback: FinishReason): StreamChunk[] {
  return deepFreeze([
    { type: 'usage', usage: options.usage ?? ZERO_USAGE },
    { type: 'finish', reason: options.finish ?? fallback },
  ])
}

/** A plain answer: one text block, usage, `finish stop`. */
export function textResponse(
  text: string,
  options: ResponseOptions & { deltas?: Deltas } = {},
): StreamChunk[] {
  const block = textBlockChunks(0, text, options.deltas === undefined ? {} : { deltas: options.deltas })
  return [...block, ...ending(options, { kind: 'stop' })]
}

/** A reasoning block (index 0), then a text block (index 1), usage, `finish stop`. */
export function reasoningResponse(
  reasoning: string,
  text: string,
  options: ResponseOptions = {},
): StreamChunk[] {
  return [
    ...textBlockChunks(0, reasoning, { kind: 'reasoning' }),
    ...textBlockChunks(1, text),
    ...ending(options, { kind: 'stop' }),
  ]
}

/** Parallel tool calls in order, optionally after a leading text block; `finish tool-calls`. */
export function toolCallsResponse(
  calls: readonly ScriptedToolCall[],
  options: ResponseOptions & { text?: string } = {},
): StreamChunk[] {
  const lead = options.text === undefined ? [] : textBlockChunks(0, options.text)
  const offset = lead.length === 0 ? 0 : 1
  return [
    ...lead,
    ...calls.flatMap((call, i) => toolCallChunks(offset + i, call)),
    ...ending(options, { kind: 'tool-calls' }),
  ]
}

/** One tool call (optionally after a leading text block); `finish tool-calls`. */
export function toolCallResponse(
  id: string,
  name: string,
  args: object | string,
  options: ResponseOptions & { text?: string } = {},
): StreamChunk[] {
  return toolCallsResponse([{ id, name, args }], options)
}

/**
 * A provider failure: `prefix` (default none), then `finish {kind: 'error', failure}` with `code`,
 * `message` and the optional `retryAfterMs`, `status` and `requestId`.
 */
export function errorResponse(
  code: string,
  message: string,
  options: {
    prefix?: readonly StreamChunk[]
    retryAfterMs?: number
    status?: number
    requestId?: string
  } = {},
): StreamChunk[] {
  const failure = llmFailure(code, message, {
    retryAfterMs: options.retryAfterMs,
    status: options.status,
    requestId: options.requestId,
  })
  return [...(options.prefix ?? []), deepFreeze({ type: 'finish', reason: { kind: 'error', failure } })]
}
