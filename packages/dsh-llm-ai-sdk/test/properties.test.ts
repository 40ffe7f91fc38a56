/**
 * Property: any sequence of V3 stream parts — out of order, repeated ids, no finish, an error part
 * or a failing stream mid-way — becomes a well-formed dsh stream that ends in exactly one finish;
 * the adapter never throws; a tool call is committed only whole.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { StreamGrammar } from 'dsh-invariants'
import { BlockAssembler, type StreamChunk } from 'dsh-llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fromAiSdk } from '../src/index.ts'
import { prompt } from './helpers.ts'

const id = fc.constantFrom('a', 'b', 'c')
const text = fc.constantFrom('', 'x', '{"k":', '1}', 'é')
const unified = fc.constantFrom('stop', 'length', 'content-filter', 'tool-calls', 'error', 'other')
const meta = fc.option(fc.constant({ anthropic: { signature: 'sig' } }), { nil: undefined })

const part: fc.Arbitrary<LanguageModelV3StreamPart> = fc.oneof(
  fc.record({
    type: fc.constantFrom('text-start', 'text-end', 'reasoning-start', 'reasoning-end'),
    id,
    providerMetadata: meta,
  }),
  fc.record({
    type: fc.constantFrom('text-delta', 'reasoning-delta'),
    id,
    delta: text,
    providerMetadata: meta,
  }),
  fc.record({ type: fc.constant('tool-input-start'), id, toolName: fc.constantFrom('f', 'g') }),
  fc.record({ type: fc.constant('tool-input-delta'), id, delta: text }),
  fc.record({ type: fc.constant('tool-input-end'), id }),
  fc.record({
    type: fc.constant('tool-call'),
    toolCallId: id,
    toolName: fc.constantFrom('f', 'g'),
    input: text,
  }),
  fc.record({
    type: fc.constant('finish'),
    finishReason: fc.record({ unified, raw: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }) }),
    usage: fc.constant({
      inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: 2, reasoning: undefined },
    }),
  }),
  fc.record({
    type: fc.constant('error'),
    error: fc.constantFrom({ type: 'overloaded_error', message: 'Overloaded' }, 'boom'),
  }),
  fc.constant({ type: 'stream-start', warnings: [] } as LanguageModelV3StreamPart),
  fc.constant({ type: 'raw', rawValue: {} } as LanguageModelV3StreamPart),
  fc.constant({ type: 'file', mediaType: 'image/png', data: 'AA==' } as LanguageModelV3StreamPart),
  fc.constant({ type: 'response-metadata', id: 'r' } as LanguageModelV3StreamPart),
) as fc.Arbitrary<LanguageModelV3StreamPart>

/** How the model fails, if at all: `doStream` rejects, or the stream errors after `at` parts. */
const failure = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.constant({ kind: 'reject' as const }),
  fc.record({ kind: fc.constant('stream-error' as const), at: fc.nat({ max: 12 }) }),
)

function fakeModel(
  parts: readonly LanguageModelV3StreamPart[],
  fail: { kind: string; at?: number },
): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'fake.chat',
    modelId: 'fake',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async () => {
      if (fail.kind === 'reject') throw new TypeError('fetch failed')
      let next = 0
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        pull(controller) {
          if (fail.kind === 'stream-error' && next === fail.at) {
            controller.error(new TypeError('terminated'))
            return
          }
          const value = parts[next++]
          if (value === undefined) controller.close()
          else controller.enqueue(value)
        },
      })
      return { stream }
    },
  }
}

describe('any V3 part sequence', () => {
  it('ends in one defined finish, keeps the stream grammar, never throws, never commits a half call', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 24 }), failure, async (parts, fail) => {
        const adapter = fromAiSdk(fakeModel(parts, fail), { onNotice: () => undefined })
        const chunks: StreamChunk[] = []
        // Throwing here fails the property: the adapter must never throw.
        for await (const chunk of adapter.stream(prompt())) chunks.push(chunk)
        const grammar = new StreamGrammar()
        const problems = chunks.map((chunk) => grammar.push(chunk)).filter((problem) => problem !== undefined)
        const end = grammar.end()
        expect(problems).toEqual([])
        expect(end).toBeUndefined()
        expect(chunks.filter((chunk) => chunk.type === 'finish')).toHaveLength(1)
        expect(chunks.at(-1)?.type).toBe('finish')

        const assembler = new BlockAssembler()
        for (const chunk of chunks) assembler.push(chunk)
        const finish = assembler.finishReason()
        if (finish.kind === 'error' || finish.kind === 'aborted') return
        // A committed message: each tool call is exactly what a `tool-call` part delivered.
        const delivered = new Map<string, string>()
        for (const p of parts) {
          if (p.type === 'tool-call' && !delivered.has(p.toolCallId)) delivered.set(p.toolCallId, p.input)
          if (p.type === 'finish' || p.type === 'error') break
        }
        for (const block of assembler.blocks()) {
          if (block.type !== 'tool-call') continue
          expect(delivered.get(block.id)).toBe(block.arguments)
        }
      }),
      { numRuns: 300 },
    )
  }, 120_000)
})
