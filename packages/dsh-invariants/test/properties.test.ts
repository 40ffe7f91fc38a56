import { installInvariantGuard } from 'dsh-invariants/vitest'
import { CallId, type StreamChunk } from 'dsh-llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { violations } from './stream-violations.ts'

installInvariantGuard()

type Kind = 'text' | 'reasoning' | 'tool-call'

/** The chunks of one well-formed block at `index`, with `deltas` deltas. */
function block(index: number, kind: Kind, deltas: number): StreamChunk[] {
  const out: StreamChunk[] = [{ type: 'block-start', index, blockType: kind }]
  for (let i = 0; i < deltas; i++) {
    if (kind === 'tool-call')
      out.push({ type: 'tool-call-delta', index, id: CallId(`c${index}`), argumentsDelta: '{}' })
    else out.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', index, text: 'x' })
  }
  out.push({
    type: 'block-end',
    index,
    block:
      kind === 'tool-call'
        ? { type: 'tool-call', id: CallId(`c${index}`), name: 't', arguments: '{}' }
        : { type: kind, text: 'x' },
  })
  return out
}

/** A well-formed stream: blocks (possibly interleaved), an optional usage, then finish. */
const wellFormed = fc
  .record({
    blocks: fc.array(
      fc.record({ kind: fc.constantFrom<Kind>('text', 'reasoning', 'tool-call'), deltas: fc.nat(3) }),
      {
        maxLength: 4,
      },
    ),
    interleave: fc.boolean(),
    usage: fc.boolean(),
  })
  .map(({ blocks, interleave, usage }) => {
    const parts = blocks.map(({ kind, deltas }, index) => block(index, kind, deltas))
    const chunks: StreamChunk[] = []
    if (interleave) {
      // Round-robin: each block keeps its own order, blocks overlap.
      const cursors = parts.map(() => 0)
      let left = parts.reduce((sum, part) => sum + part.length, 0)
      while (left > 0) {
        parts.forEach((part, i) => {
          const at = cursors[i] ?? 0
          const chunk = part[at]
          if (chunk === undefined) return
          chunks.push(chunk)
          cursors[i] = at + 1
          left--
        })
      }
    } else {
      for (const part of parts) chunks.push(...part)
    }
    if (usage) chunks.push({ type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } })
    chunks.push({ type: 'finish', reason: { kind: 'stop' } })
    return chunks
  })

describe('stream grammar properties', () => {
  it('accepts every well-formed stream, interleaved blocks included', () => {
    fc.assert(fc.property(wellFormed, (chunks) => violations(chunks).length === 0))
  })

  it('reports each single defect planted in a well-formed stream', () => {
    const defect = fc.constantFrom('drop-finish', 'after-finish', 'second-usage', 'drop-start', 'second-end')
    fc.assert(
      fc.property(wellFormed, defect, (chunks, kind) => {
        const bad = [...chunks]
        const startAt = bad.findIndex((chunk) => chunk.type === 'block-start')
        const end = bad.find((chunk) => chunk.type === 'block-end')
        switch (kind) {
          case 'drop-finish':
            bad.pop()
            break
          case 'after-finish':
            bad.push({ type: 'usage', usage: { inputTokens: 0, outputTokens: 0 } })
            break
          case 'second-usage':
            bad.splice(bad.length - 1, 0, { type: 'usage', usage: { inputTokens: 0, outputTokens: 0 } })
            bad.splice(bad.length - 1, 0, { type: 'usage', usage: { inputTokens: 0, outputTokens: 0 } })
            break
          case 'drop-start':
            if (startAt < 0) return true
            bad.splice(startAt, 1)
            break
          case 'second-end':
            if (end === undefined) return true
            bad.splice(bad.length - 1, 0, end)
            break
        }
        expect(violations(bad).length).toBeGreaterThan(0)
        return true
      }),
    )
  })
})
