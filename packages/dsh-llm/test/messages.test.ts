import { CallId, createToolResultMessage, createUserMessage } from 'dsh-llm'
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
})
