/**
 * The stream guard's quick checks: chunks that need nothing come back `undefined` (logged as they
 * are) — including ones holding a well-formed surrogate pair, which the quick surrogate scan flags
 * and the full check must still pass — and a lone surrogate behind the quick checks is repaired.
 */
import { CallId, REPLACEMENT_CHARACTER, type StreamChunk } from 'dsh-llm'
import { describe, expect, it } from 'vitest'
import { StreamGuard, type TakenCallIds } from '../src/model/stream-guard.ts'

const PAIR = '\u{1F600}'
const LONE = '\uD800'

function guard(taken: readonly string[] = []): { guard: StreamGuard; warnings: string[] } {
  const ids = new Set(taken)
  const book: TakenCallIds = { has: (id) => ids.has(id), nextSuffix: new Map() }
  const warnings: string[] = []
  return { guard: new StreamGuard(book, (problem) => warnings.push(problem)), warnings }
}

function toolStep(text: string, args: string, id = 'call-1'): StreamChunk[] {
  const callId = CallId(id)
  return [
    { type: 'block-start', index: 0, blockType: 'text' },
    { type: 'text-delta', index: 0, text },
    { type: 'block-end', index: 0, block: { type: 'text', text } },
    { type: 'block-start', index: 1, blockType: 'tool-call' },
    { type: 'tool-call-delta', index: 1, id: callId, name: `read${text}`, argumentsDelta: args },
    {
      type: 'block-end',
      index: 1,
      block: { type: 'tool-call', id: callId, name: `read${text}`, arguments: args },
    },
    { type: 'usage', usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0 } },
    { type: 'finish', reason: { kind: 'tool-calls' } },
  ]
}

describe('StreamGuard quick checks', () => {
  it('passes every chunk of a plain step untouched', () => {
    const { guard: g, warnings } = guard()
    expect(toolStep('hello', '{"path":"a.ts"}').map((chunk) => g.accept(chunk))).toEqual(
      Array(8).fill(undefined),
    )
    expect(warnings).toEqual([])
  })

  it('passes chunks holding a well-formed surrogate pair untouched', () => {
    const { guard: g } = guard()
    const chunks = toolStep(`smile ${PAIR}`, `{"face":"${PAIR}"}`)
    chunks.push({ type: 'finish', reason: { kind: 'stop', note: PAIR } as never })
    expect(chunks.map((chunk) => g.accept(chunk))).toEqual(Array(9).fill(undefined))
  })

  it('repairs a lone surrogate in a tool-call block-end behind the quick checks', () => {
    const { guard: g } = guard()
    const chunks = toolStep('ok', '{}')
    const end = chunks[5] as StreamChunk & { type: 'block-end' }
    const bad: StreamChunk = {
      ...end,
      block: { type: 'tool-call', id: CallId('call-1'), name: 'readok', arguments: `{"a":"${LONE}"}` },
    }
    for (const chunk of chunks.slice(0, 5)) g.accept(chunk)
    expect(g.accept(bad)).toEqual([
      {
        ...end,
        block: {
          type: 'tool-call',
          id: 'call-1',
          name: 'readok',
          arguments: `{"a":"${REPLACEMENT_CHARACTER}"}`,
        },
      },
    ])
  })

  it('renames a reused id at block-end even when the block has no surrogate', () => {
    const { guard: g } = guard(['call-1'])
    const chunks = toolStep('ok', '{}')
    const accepted = chunks.map((chunk) => g.accept(chunk))
    expect(accepted[4]).toEqual([{ ...chunks[4], id: 'call-1~2' }])
    expect(accepted[5]).toEqual([
      { ...chunks[5], block: { type: 'tool-call', id: 'call-1~2', name: 'readok', arguments: '{}' } },
    ])
  })

  it('repairs a finish failure whose retry delay is not finite', () => {
    const { guard: g } = guard()
    const failure = { code: 'x', message: 'm', retryable: true, retryAfterMs: Number.POSITIVE_INFINITY }
    const accepted = g.accept({ type: 'finish', reason: { kind: 'error', failure } as never })
    expect(accepted).toEqual([
      { type: 'finish', reason: { kind: 'error', failure: { code: 'x', message: 'm', retryable: true } } },
    ])
  })
})
