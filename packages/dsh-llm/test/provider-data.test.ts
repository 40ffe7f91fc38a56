/** Replay metadata rides on blocks: kept from block-end, and dropped with its block (issue 32). */
import { BlockAssembler, CallId, type StreamChunk } from 'dsh-llm'
import { describe, expect, it } from 'vitest'

const signed = {
  type: 'reasoning',
  text: 'plan',
  providerData: { anthropic: { signature: 'sig-1' } },
} as const
const redacted = {
  type: 'reasoning',
  text: '',
  providerData: { anthropic: { redactedData: 'opaque' } },
} as const
const call = {
  type: 'tool-call',
  id: CallId('c1'),
  name: 'f',
  arguments: '{}',
  providerData: { google: { thoughtSignature: 'ts-1' } },
} as const

function assemble(chunks: readonly StreamChunk[]): BlockAssembler {
  const assembler = new BlockAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return assembler
}

const stream = (finish: 'tool-calls' | 'max-tokens'): StreamChunk[] => [
  { type: 'block-start', index: 0, blockType: 'reasoning' },
  { type: 'reasoning-delta', index: 0, text: 'plan' },
  { type: 'block-end', index: 0, block: signed },
  { type: 'block-start', index: 1, blockType: 'reasoning' },
  { type: 'block-end', index: 1, block: redacted },
  { type: 'block-start', index: 2, blockType: 'tool-call' },
  { type: 'tool-call-delta', index: 2, id: CallId('c1'), name: 'f', argumentsDelta: '{}' },
  { type: 'block-end', index: 2, block: call },
  { type: 'finish', reason: { kind: finish } },
]

describe('providerData through the assembler', () => {
  it('the block from block-end keeps its providerData, in block order', () => {
    expect(assemble(stream('tool-calls')).blocks()).toEqual([signed, redacted, call])
  })

  it('a max-tokens finish drops the tool call and its metadata with it', () => {
    expect(assemble(stream('max-tokens')).blocks()).toEqual([signed, redacted])
  })

  it('a cancelled stream keeps reasoning with text (and its signature), not redacted blocks or calls', () => {
    const assembler = assemble(stream('tool-calls').slice(0, -1))
    expect(assembler.interruptedBlocks()).toEqual([signed])
  })
})
