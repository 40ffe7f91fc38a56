import {
  BlockAssembler,
  type ContentBlock,
  type ContentBlockType,
  createUserMessage,
  type FinishReason,
  type llmFailure,
  type MessageSource,
} from 'dsh-llm'
import { describe, expect, expectTypeOf, it } from 'vitest'

// A plugin adds a block type, a message source and a finish reason by declaration merging.
declare module 'dsh-llm' {
  interface ContentBlockMap {
    image: { readonly type: 'image'; readonly url: string }
  }
  interface MessageSourceMap {
    cron: { readonly kind: 'cron'; readonly schedule: string }
  }
  interface FinishReasonMap {
    'content-filter': { readonly kind: 'content-filter'; readonly category: string }
  }
}

describe('merge-extensible vocabularies', () => {
  it('widen the unions with the merged members', () => {
    expectTypeOf<{ type: 'image'; url: string }>().toExtend<ContentBlock>()
    expectTypeOf<'image'>().toExtend<ContentBlockType>()
    expectTypeOf<{ kind: 'cron'; schedule: string }>().toExtend<MessageSource>()
    expectTypeOf<{ kind: 'content-filter'; category: string }>().toExtend<FinishReason>()
    // The built-in members are still there.
    expectTypeOf<{ type: 'text'; text: string }>().toExtend<ContentBlock>()
    expectTypeOf<{ kind: 'aborted'; failure: ReturnType<typeof llmFailure> }>().toExtend<FinishReason>()
    // A merged member is checked like a built-in one.
    expectTypeOf<{ type: 'image'; href: string }>().not.toExtend<ContentBlock>()
  })

  it('accept real values of the new kinds', () => {
    const message = createUserMessage({
      content: [
        { type: 'image', url: 'https://example.com/cat.png' },
        { type: 'text', text: 'what is this?' },
      ],
      source: { kind: 'cron', schedule: '0 9 * * *' },
      id: 'm1',
    })
    expect(message.content[0]).toEqual({ type: 'image', url: 'https://example.com/cat.png' })
    expect(message.source).toEqual({ kind: 'cron', schedule: '0 9 * * *' })
  })

  it('pass unknown kinds through the assembler', () => {
    const assembler = new BlockAssembler()
    assembler.push({ type: 'block-start', index: 0, blockType: 'image' })
    assembler.push({ type: 'text-delta', index: 1, text: 'caption' })
    assembler.push({ type: 'block-end', index: 0, block: { type: 'image', url: 'u' } })
    assembler.push({ type: 'finish', reason: { kind: 'content-filter', category: 'violence' } })
    expect(assembler.blocks()).toEqual([
      { type: 'image', url: 'u' },
      { type: 'text', text: 'caption' },
    ])
    expect(assembler.finishReason()).toEqual({ kind: 'content-filter', category: 'violence' })
  })
})
