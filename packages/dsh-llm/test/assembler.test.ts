import { BlockAssembler, CallId, type StreamChunk, type ToolCallBlock } from 'dsh-llm'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'

function assemble(chunks: readonly StreamChunk[]): BlockAssembler {
  const assembler = new BlockAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return assembler
}

const failure = { code: 'SERVER', message: 'boom' }

describe('BlockAssembler', () => {
  it('assembles a text response and its usage', () => {
    const a = assemble(
      textResponse('hello world', { deltas: 'words', usage: { inputTokens: 3, outputTokens: 2 } }),
    )
    expect(a.blocks()).toEqual([{ type: 'text', text: 'hello world' }])
    expect(a.usage()).toEqual({ inputTokens: 3, outputTokens: 2 })
    expect(a.finishReason()).toEqual({ kind: 'stop' })
    expect(a.isFinished).toBe(true)
  })

  it('builds blocks from deltas alone, in first-seen index order', () => {
    const a = assemble([
      { type: 'block-start', index: 2, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 2, text: 'think' },
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'a' },
      { type: 'reasoning-delta', index: 2, text: 'ing' },
      { type: 'text-delta', index: 0, text: 'b' },
      { type: 'tool-call-delta', index: 1, id: CallId('c1'), name: 'read', argumentsDelta: '{"p":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '1}' },
    ])
    expect(a.blocks()).toEqual([
      { type: 'reasoning', text: 'thinking' },
      { type: 'text', text: 'ab' },
      { type: 'tool-call', id: 'c1', name: 'read', arguments: '{"p":1}' },
    ])
    expect(a.isFinished).toBe(false)
  })

  it('returns the same frozen array until a new chunk changes it', () => {
    const a = assemble([{ type: 'text-delta', index: 0, text: 'x' }])
    const first = a.blocks()
    expect(a.blocks()).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    expect(Object.isFrozen(first[0])).toBe(true)
    a.push({ type: 'text-delta', index: 0, text: 'y' })
    expect(a.blocks()).toEqual([{ type: 'text', text: 'xy' }])
    expect(first).toEqual([{ type: 'text', text: 'x' }])
  })

  it('ignores straggler deltas after block-end, a second block-end and a duplicate block-start', () => {
    const a = assemble([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'hi' },
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'text-delta', index: 0, text: '!' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'hi!' } },
      { type: 'text-delta', index: 0, text: 'late' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'second end' } },
      { type: 'block-start', index: 0, blockType: 'text' },
    ])
    expect(a.blocks()).toEqual([{ type: 'text', text: 'hi!' }])
  })

  it('takes the block-end block as authoritative over the deltas', () => {
    const a = assemble([
      { type: 'text-delta', index: 0, text: 'partial' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'corrected' } },
    ])
    expect(a.blocks()).toEqual([{ type: 'text', text: 'corrected' }])
  })

  it('keeps a block-end for an index never started, and a block of an unknown kind only once ended', () => {
    const a = assemble([
      { type: 'block-start', index: 0, blockType: 'tool-result' },
      { type: 'block-end', index: 1, block: { type: 'reasoning', text: 'r' } },
    ])
    expect(a.blocks()).toEqual([{ type: 'reasoning', text: 'r' }])
    a.push({
      type: 'block-end',
      index: 0,
      block: { type: 'tool-result', toolCallId: CallId('c'), content: [] },
    })
    expect(a.blocks()).toEqual([
      { type: 'tool-result', toolCallId: 'c', content: [] },
      { type: 'reasoning', text: 'r' },
    ])
  })

  it('ignores deltas whose kind does not match the block type', () => {
    const a = assemble([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'reasoning-delta', index: 0, text: 'no' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: 'no' },
      { type: 'text-delta', index: 0, text: 'yes' },
    ])
    expect(a.blocks()).toEqual([{ type: 'text', text: 'yes' }])
  })

  it('defaults a missing finish to stop and ignores every chunk after finish', () => {
    const a = assemble([{ type: 'text-delta', index: 0, text: 'a' }])
    expect(a.finishReason()).toEqual({ kind: 'stop' })
    a.push({ type: 'finish', reason: { kind: 'error', failure } })
    a.push({ type: 'text-delta', index: 0, text: 'b' })
    a.push({ type: 'text-delta', index: 1, text: 'c' })
    a.push({ type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } })
    a.push({ type: 'finish', reason: { kind: 'stop' } })
    expect(a.blocks()).toEqual([{ type: 'text', text: 'a' }])
    expect(a.usage()).toBeUndefined()
    expect(a.finishReason()).toEqual({ kind: 'error', failure })
  })

  it('keeps the last usage before finish', () => {
    const a = assemble([
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 4 } },
    ])
    expect(a.usage()).toEqual({ inputTokens: 5, outputTokens: 2, cacheReadTokens: 4 })
  })

  it('drops tool calls, ended or open, after a max-tokens finish', () => {
    const a = assemble([
      ...toolCallResponse('c1', 'read', { path: 'a' }, { text: 'let me look' }).slice(0, -1),
      { type: 'tool-call-delta', index: 2, id: CallId('c2'), name: 'read', argumentsDelta: '{"pa' },
      { type: 'finish', reason: { kind: 'max-tokens' } },
    ])
    expect(a.blocks()).toEqual([{ type: 'text', text: 'let me look' }])
    expect(a.finishReason()).toEqual({ kind: 'max-tokens' })
  })

  it('gives an open tool call without an id a deterministic id from its index', () => {
    const a = assemble([
      { type: 'tool-call-delta', index: 3, name: 'ls', argumentsDelta: '{}' },
      { type: 'tool-call-delta', index: 3, id: '' as CallId, argumentsDelta: '' },
    ])
    expect(a.blocks()).toEqual([{ type: 'tool-call', id: 'dsh-call-3', name: 'ls', arguments: '{}' }])
    const prefixed = new BlockAssembler({ missingCallIdPrefix: 'turn1-step2-' })
    prefixed.push({ type: 'block-start', index: 0, blockType: 'tool-call' })
    expect(prefixed.blocks()).toEqual([{ type: 'tool-call', id: 'turn1-step2-0', name: '', arguments: '' }])
  })

  it('gives a completed tool call whose block-end has no id (or "") its deltas’ id, else one from its index', () => {
    const a = assemble([
      { type: 'tool-call-delta', index: 0, id: CallId('c1'), name: 'ls', argumentsDelta: '{}' },
      {
        type: 'block-end',
        index: 0,
        block: { type: 'tool-call', name: 'ls', arguments: '{}' } as ToolCallBlock,
      },
      { type: 'tool-call-delta', index: 1, name: 'ls', argumentsDelta: '{}' },
      {
        type: 'block-end',
        index: 1,
        block: { type: 'tool-call', id: '' as CallId, name: 'ls', arguments: '{}' },
      },
      {
        type: 'block-end',
        index: 2,
        block: { type: 'tool-call', name: 'cat', arguments: '{}' } as ToolCallBlock,
      },
    ])
    expect(a.blocks()).toEqual([
      { type: 'tool-call', id: 'c1', name: 'ls', arguments: '{}' },
      { type: 'tool-call', id: 'dsh-call-1', name: 'ls', arguments: '{}' },
      { type: 'tool-call', id: 'dsh-call-2', name: 'cat', arguments: '{}' },
    ])
  })

  it('keeps the first id and name a tool call carried', () => {
    const a = assemble([
      { type: 'tool-call-delta', index: 0, id: CallId('first'), name: 'read', argumentsDelta: '{' },
      { type: 'tool-call-delta', index: 0, id: CallId('second'), name: 'write', argumentsDelta: '}' },
    ])
    expect(a.blocks()).toEqual([{ type: 'tool-call', id: 'first', name: 'read', arguments: '{}' }])
  })

  it('offers the non-empty text and reasoning prefix of an interrupted stream', () => {
    const a = assemble([
      { type: 'reasoning-delta', index: 0, text: 'plan' },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'tool-call-delta', index: 2, id: CallId('c1'), name: 'read', argumentsDelta: '{"p' },
      { type: 'text-delta', index: 3, text: 'partial ans' },
    ])
    const kept = a.interruptedBlocks()
    expect(kept).toEqual([
      { type: 'reasoning', text: 'plan' },
      { type: 'text', text: 'partial ans' },
    ])
    expect(Object.isFrozen(kept)).toBe(true)
  })

  it('throws for a chunk type outside the closed union', () => {
    const a = new BlockAssembler()
    const bogus = { type: 'bogus', index: 0 } as unknown as StreamChunk
    expect(() => a.push(bogus)).toThrow(
      new TypeError('BlockAssembler.push: unexpected value {"type":"bogus","index":0}'),
    )
  })

  it('does not share state with the pushed block-end chunk', () => {
    const block = { type: 'text' as const, text: 'mine' }
    const a = assemble([{ type: 'block-end', index: 0, block }])
    block.text = 'changed'
    expect(a.blocks()).toEqual([{ type: 'text', text: 'mine' }])
  })
})

describe('BlockAssembler cost', () => {
  function timeDeltas(count: number): { ms: number; length: number } {
    const a = new BlockAssembler()
    const chunk: StreamChunk = { type: 'text-delta', index: 0, text: 'x' }
    const started = performance.now()
    for (let i = 0; i < count; i++) a.push(chunk)
    const block = a.blocks()[0]
    const length = block?.type === 'text' ? block.text.length : -1
    return { ms: performance.now() - started, length }
  }

  it('assembles 1,000,000 one-character deltas in well under a few seconds', () => {
    const { ms, length } = timeDeltas(1_000_000)
    expect(length).toBe(1_000_000)
    expect(ms).toBeLessThan(3_000)
  })

  it('pushes at a cost independent of the text already accumulated', () => {
    // Any per-push snapshot (re-joining or copying the block's text) would copy 16 MB on each of
    // these 100,000 pushes — terabytes in all. Appending must not look at what came before.
    const a = new BlockAssembler()
    a.push({ type: 'text-delta', index: 0, text: 'y'.repeat(16 * 1024 * 1024) })
    const chunk: StreamChunk = { type: 'text-delta', index: 0, text: 'x' }
    const started = performance.now()
    for (let i = 0; i < 100_000; i++) a.push(chunk)
    expect(performance.now() - started).toBeLessThan(2_000)
    const block = a.blocks()[0]
    expect(block?.type === 'text' ? block.text.length : -1).toBe(16 * 1024 * 1024 + 100_000)
  })
})
