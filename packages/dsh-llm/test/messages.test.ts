import {
  BlockAssembler,
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  type ToolResultMessage,
} from 'dsh-llm'
import { describe, expect, it } from 'vitest'

describe('message constructors', () => {
  it('returns a deep-frozen copy detached from its input', () => {
    const content = [{ type: 'text' as const, text: 'hi' }]
    const message = createUserMessage({ content, source: { kind: 'user' }, id: 'm1' })
    content[0] = { type: 'text', text: 'changed' }
    expect(message).toEqual({
      id: 'm1',
      role: 'user',
      content: [{ type: 'text', text: 'hi' }],
      source: { kind: 'user' },
    })
    expect(() => {
      ;(message.content[0] as { text: string }).text = 'x'
    }).toThrow(TypeError)
  })

  it('keeps isError only when true', () => {
    const ok = createToolResultMessage({ callId: CallId('c1'), content: [], id: 'r1' })
    expect(ok.content[0]).toEqual({ type: 'tool-result', toolCallId: 'c1', content: [] })
    expect(ok.source).toEqual({ kind: 'tool', callId: 'c1' })
  })

  it('tool results and assistant messages are deep-frozen, detached, with the keys in order', () => {
    const content = [{ type: 'text' as const, text: '42' }]
    const result = createToolResultMessage({ callId: CallId('c1'), content, isError: true, id: 'r1' })
    content[0] = { type: 'text', text: 'changed' }
    expect(JSON.stringify(result)).toBe(
      '{"id":"r1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"42"}],"isError":true}],"source":{"kind":"tool","callId":"c1"}}',
    )
    const parts: unknown[] = [
      result,
      result.content,
      result.content[0],
      result.content[0].content,
      result.source,
    ]
    expect(parts.every((part) => Object.isFrozen(part))).toBe(true)
    // Outside the types, a missing call id leaves no key (as a copy of the whole message did).
    const loose = createToolResultMessage({ content: [], id: 'r2' } as unknown as Parameters<
      typeof createToolResultMessage
    >[0]) as ToolResultMessage
    expect(JSON.stringify(loose)).toBe(
      '{"id":"r2","role":"user","content":[{"type":"tool-result","content":[]}],"source":{"kind":"tool"}}',
    )
    const blocks = [{ type: 'text' as const, text: 'hi' }]
    const source = { kind: 'model' as const, provider: 'p', model: 'm' }
    const said = createAssistantMessage({ content: blocks, source, id: 'a1' })
    blocks[0] = { type: 'text', text: 'changed' }
    expect(said).toEqual({ id: 'a1', role: 'assistant', content: [{ type: 'text', text: 'hi' }], source })
    expect(said.content).not.toBe(blocks)
    expect(Object.isFrozen(said) && Object.isFrozen(said.content) && Object.isFrozen(said.source)).toBe(true)
  })

  it('an assembler’s block list becomes the message content without a second copy', () => {
    const assembler = new BlockAssembler()
    assembler.push({ type: 'block-start', index: 0, blockType: 'text' })
    assembler.push({ type: 'text-delta', index: 0, text: 'hi' })
    assembler.push({ type: 'block-end', index: 0, block: { type: 'text', text: 'hi' } })
    const blocks = assembler.blocks()
    const said = createAssistantMessage({
      content: blocks,
      source: { kind: 'model', provider: 'p', model: 'm' },
    })
    expect(said.content).toBe(blocks)
    expect(Object.isFrozen(blocks) && Object.isFrozen(blocks[0])).toBe(true)
  })
})
