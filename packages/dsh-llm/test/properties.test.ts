import { BlockAssembler, CallId, type ContentBlock, type ContentBlockType, type StreamChunk } from 'dsh-llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

// A small index pool makes collisions (duplicate starts, stragglers, mixed kinds) common.
const index = fc.integer({ min: 0, max: 3 })
const piece = fc.string({ maxLength: 3 })
const callId = fc.constantFrom(CallId('a'), CallId('b'))

const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  piece.map((text) => ({ type: 'text', text }) as const),
  piece.map((text) => ({ type: 'reasoning', text }) as const),
  fc.record({ id: callId, name: piece, arguments: piece }).map((b) => ({ type: 'tool-call', ...b }) as const),
)

const blockType = fc.constantFrom<ContentBlockType>('text', 'reasoning', 'tool-call')

/** The chunks that address a block. */
type IndexedChunk = Extract<StreamChunk, { index: number }>

const delta: fc.Arbitrary<IndexedChunk> = fc.oneof(
  fc.record({ index, text: piece }).map((c) => ({ type: 'text-delta', ...c }) as const),
  fc.record({ index, text: piece }).map((c) => ({ type: 'reasoning-delta', ...c }) as const),
  fc
    .record({
      index,
      id: fc.option(callId, { nil: undefined }),
      name: fc.option(piece, { nil: undefined }),
      argumentsDelta: piece,
    })
    .map(({ id, name, ...rest }): IndexedChunk => {
      const chunk = { type: 'tool-call-delta' as const, ...rest }
      return { ...chunk, ...(id === undefined ? {} : { id }), ...(name === undefined ? {} : { name }) }
    }),
)

const structural: fc.Arbitrary<StreamChunk> = fc.oneof(
  fc.record({ index, blockType: blockType }).map((c) => ({ type: 'block-start', ...c }) as const),
  fc.record({ index, block }).map((c) => ({ type: 'block-end', ...c }) as const),
  fc
    .record({ inputTokens: fc.nat(), outputTokens: fc.nat() })
    .map((usage) => ({ type: 'usage', usage }) as const),
  fc.constantFrom<StreamChunk>(
    { type: 'finish', reason: { kind: 'stop' } },
    { type: 'finish', reason: { kind: 'tool-calls' } },
    { type: 'finish', reason: { kind: 'max-tokens' } },
    { type: 'finish', reason: { kind: 'error', failure: { code: 'SERVER', message: 'x' } } },
  ),
)

const anyChunks = fc.array(fc.oneof({ arbitrary: delta, weight: 3 }, { arbitrary: structural, weight: 2 }), {
  maxLength: 40,
})
const deltasOnly: fc.Arbitrary<IndexedChunk[]> = fc.array(
  fc.oneof(
    delta,
    fc.record({ index, blockType: blockType }).map((c) => ({ type: 'block-start', ...c }) as const),
  ),
  { maxLength: 40 },
)

function assemble(chunks: readonly StreamChunk[]): BlockAssembler {
  const assembler = new BlockAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return assembler
}

function kindOf(chunk: StreamChunk): string | undefined {
  switch (chunk.type) {
    case 'block-start':
      return chunk.blockType
    case 'text-delta':
      return 'text'
    case 'reasoning-delta':
      return 'reasoning'
    case 'tool-call-delta':
      return 'tool-call'
    case 'block-end':
      return chunk.block.type
    default:
      return undefined
  }
}

/**
 * The contract, stated as a reference: consider the chunks before the first `finish`. Each index
 * seen there yields one block, in first-seen order, whose kind is that of its first chunk. If a
 * `block-end` for it arrived, the block is that `block-end`'s block; otherwise text/reasoning is
 * the concatenation of its matching deltas, and a tool call's arguments the concatenation of its
 * argument deltas (id and name: the first ones given). A `max-tokens` finish drops tool calls.
 */
function expected(chunks: readonly StreamChunk[]): ContentBlock[] {
  const finishAt = chunks.findIndex((c) => c.type === 'finish')
  const cut = finishAt === -1 ? chunks : chunks.slice(0, finishAt)
  const finish = finishAt === -1 ? undefined : chunks[finishAt]
  const dropCalls = finish?.type === 'finish' && finish.reason.kind === 'max-tokens'
  const order: number[] = []
  for (const c of cut) if ('index' in c && !order.includes(c.index)) order.push(c.index)
  const out: ContentBlock[] = []
  for (const i of order) {
    const own = cut.filter((c) => 'index' in c && c.index === i)
    const kind = kindOf(own[0] as StreamChunk)
    const end = own.find((c) => c.type === 'block-end')
    const before = end === undefined ? own : own.slice(0, own.indexOf(end))
    let built: ContentBlock
    if (end?.type === 'block-end') built = end.block
    else if (kind === 'tool-call') {
      const calls = before.flatMap((c) => (c.type === 'tool-call-delta' ? [c] : []))
      built = {
        type: 'tool-call',
        id: calls.find((c) => c.id !== undefined && c.id !== '')?.id ?? CallId(`dsh-call-${i}`),
        name: calls.find((c) => c.name !== undefined && c.name !== '')?.name ?? '',
        arguments: calls.map((c) => c.argumentsDelta).join(''),
      }
    } else {
      const type = kind === 'text' ? 'text-delta' : 'reasoning-delta'
      const text = before.map((c) => (c.type === type ? c.text : '')).join('')
      built = kind === 'text' ? { type: 'text', text } : { type: 'reasoning', text }
    }
    if (!(dropCalls && built.type === 'tool-call')) out.push(built)
  }
  return out
}

describe('BlockAssembler properties', () => {
  it('never throws, and blocks() is idempotent and frozen', () => {
    fc.assert(
      fc.property(anyChunks, (chunks) => {
        const assembler = assemble(chunks)
        const first = assembler.blocks()
        expect(assembler.blocks()).toBe(first)
        expect(structuredClone(assembler.blocks())).toEqual(structuredClone(first))
        expect(Object.isFrozen(first) && first.every((b) => Object.isFrozen(b))).toBe(true)
        assembler.interruptedBlocks()
        assembler.finishReason()
      }),
      { numRuns: 500 },
    )
  })

  it('matches the reference contract for any interleaving', () => {
    fc.assert(
      fc.property(anyChunks, (chunks) => {
        expect(assemble(chunks).blocks()).toEqual(expected(chunks))
      }),
      { numRuns: 500 },
    )
  })

  it('text equals the concatenation of its deltas and tool-call arguments those of theirs (no block-end)', () => {
    fc.assert(
      fc.property(deltasOnly, (chunks) => {
        const blocks = assemble(chunks).blocks()
        for (const [position, i] of [...new Set(chunks.map((c) => c.index))].entries()) {
          const b = blocks[position]
          const own = chunks.filter((c) => c.index === i)
          if (b?.type === 'text' || b?.type === 'reasoning') {
            const type = b.type === 'text' ? 'text-delta' : 'reasoning-delta'
            expect(b.text).toBe(own.map((c) => (c.type === type ? c.text : '')).join(''))
          } else if (b?.type === 'tool-call') {
            expect(b.arguments).toBe(
              own.map((c) => (c.type === 'tool-call-delta' ? c.argumentsDelta : '')).join(''),
            )
          }
        }
      }),
      { numRuns: 500 },
    )
  })

  it('keeps only non-empty text and reasoning when interrupted', () => {
    fc.assert(
      fc.property(anyChunks, (chunks) => {
        const assembler = assemble(chunks)
        const kept = assembler
          .blocks()
          .filter((b) => (b.type === 'text' || b.type === 'reasoning') && b.text !== '')
        expect(assembler.interruptedBlocks()).toEqual(kept)
      }),
      { numRuns: 300 },
    )
  })
})
