import type { Context } from 'cordis'
import { InvariantError } from 'dsh-invariants'
import { createCheckedApp, installInvariantGuard } from 'dsh-invariants/vitest'
import { CallId, type StreamChunk } from 'dsh-llm'
import { errorResponse, scriptedAdapter, textResponse, throwAfter, toolCallResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { HEADER } from './driver.ts'
import { violations } from './stream-violations.ts'

installInvariantGuard()

const text = (index: number, value: string): StreamChunk => ({ type: 'text-delta', index, text: value })
const start = (index: number, blockType: 'text' | 'reasoning' | 'tool-call' = 'text'): StreamChunk => ({
  type: 'block-start',
  index,
  blockType,
})
const end = (index: number, value = 'hi'): StreamChunk => ({
  type: 'block-end',
  index,
  block: { type: 'text', text: value },
})
const usage: StreamChunk = { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } }
const stop: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }

describe('StreamGrammar', () => {
  it('accepts what the scripted responses produce', () => {
    expect(violations(textResponse('hello world', { deltas: 'words' }))).toEqual([])
    expect(violations(toolCallResponse('c1', 'read', { path: 'a.txt' }, { text: 'reading' }))).toEqual([])
    expect(violations(errorResponse('SERVER', 'boom'))).toEqual([])
  })

  it('reports each broken rule with the chunk position', () => {
    expect(violations([text(0, 'x'), stop])).toEqual([
      'chunk #0 (text-delta index 0) needs an open text block 0, but no block-start opened it',
    ])
    expect(violations([start(0, 'tool-call'), text(0, 'x'), stop])).toEqual([
      'chunk #1 (text-delta index 0) needs an open text block 0, but block 0 is a tool-call block',
    ])
    expect(violations([start(0), end(0), text(0, 'late'), stop])).toEqual([
      'chunk #2 (text-delta index 0) needs an open text block 0, but that block already ended',
    ])
    expect(violations([start(0), end(1), stop])).toEqual([
      'chunk #1 (block-end index 1) ends block 1, which no block-start opened',
    ])
    expect(violations([start(0), end(0), end(0), stop])).toEqual([
      'chunk #2 (block-end index 0) ends block 0, which already ended',
    ])
    expect(violations([start(0, 'reasoning'), end(0), stop])).toEqual([
      'chunk #1 (block-end index 0) carries a text block, but block 0 was started as reasoning',
    ])
    expect(violations([start(0), start(0), end(0), stop])).toEqual([
      'chunk #1 (block-start index 0) starts block 0 again; it was already started as text',
    ])
    expect(violations([usage, usage, stop])).toEqual([
      'chunk #1 (usage) is a second usage chunk; the first was chunk #0',
    ])
    expect(violations([stop, text(0, 'x')])).toEqual([
      'chunk #1 (text-delta index 0) arrived after the finish chunk #0; a stream must end at its finish',
    ])
    expect(violations([start(0), text(0, 'x')])).toEqual([
      'the stream ended after 2 chunk(s) without a finish chunk',
    ])
    const call: StreamChunk = { type: 'tool-call-delta', index: 0, id: CallId('c1'), argumentsDelta: '{}' }
    expect(violations([start(0), call, stop])).toEqual([
      'chunk #1 (tool-call-delta index 0) needs an open tool-call block 0, but block 0 is a text block',
    ])
  })
})

async function appWith(script: Parameters<typeof scriptedAdapter>[0]): Promise<Context> {
  const app = await createCheckedApp()
  app.llm.registerAdapter('scripted', scriptedAdapter(script))
  return app
}

/** Reads the stream; returns the chunks delivered before it threw, and what it threw. */
async function consume(
  stream: AsyncIterable<StreamChunk>,
): Promise<{ chunks: StreamChunk[]; error: unknown }> {
  const chunks: StreamChunk[] = []
  try {
    for await (const chunk of stream) chunks.push(chunk)
  } catch (error) {
    return { chunks, error }
  }
  return { chunks, error: undefined }
}

const request = { ...HEADER.config, messages: [] }

describe('stream grammar around ctx.llm.stream', () => {
  it('delivers a well-formed stream unchanged', async () => {
    const app = await appWith([textResponse('fine')])
    expect(await consume(app.llm.stream(request))).toEqual({ chunks: textResponse('fine'), error: undefined })
    expect(app.invariants.counters.streamsChecked).toBe(1)
  })

  it('throws at a delta after finish, even though a consumer would stop at finish', async () => {
    const app = await appWith([[...textResponse('done'), text(0, ' and more')]])
    const { chunks, error } = await consume(app.llm.stream(request))
    expect(chunks).toEqual(textResponse('done').slice(0, -1))
    expect(error).toBeInstanceOf(InvariantError)
    expect(error).toMatchObject({
      code: 'INVARIANT',
      check: 'stream-grammar',
      message:
        '[stream-grammar] the stream of an unmarked scripted/script-1 request: chunk #5 (text-delta index 0) arrived after the finish chunk #4; a stream must end at its finish',
    })
    expect(app.invariants.takeViolations()).toEqual([
      {
        check: 'stream-grammar',
        message:
          'the stream of an unmarked scripted/script-1 request: chunk #5 (text-delta index 0) arrived after the finish chunk #4; a stream must end at its finish',
      },
    ])
  })

  it('throws at the end of a stream with no finish', async () => {
    const app = await appWith([[start(0), text(0, 'cut'), end(0, 'cut')]])
    const { chunks, error } = await consume(app.llm.stream(request))
    expect(chunks).toEqual([start(0), text(0, 'cut'), end(0, 'cut')])
    expect(error).toMatchObject({
      message:
        '[stream-grammar] the stream of an unmarked scripted/script-1 request: the stream ended after 3 chunk(s) without a finish chunk',
    })
    expect(app.invariants.takeViolations()).toHaveLength(1)
  })

  it('throws at a second usage chunk, before the consumer sees it', async () => {
    const app = await appWith([[usage, usage, stop]])
    const { chunks, error } = await consume(app.llm.stream(request))
    expect(chunks).toEqual([usage])
    expect((error as InvariantError).violation.message).toBe(
      'the stream of an unmarked scripted/script-1 request: chunk #1 (usage) is a second usage chunk; the first was chunk #0',
    )
    app.invariants.clearViolations()
  })

  it('accepts the runtime normalising an adapter throw into a finish', async () => {
    const app = await appWith([throwAfter(new Error('socket closed'), [start(0), text(0, 'par')])])
    const { chunks, error } = await consume(app.llm.stream(request))
    expect(error).toBeUndefined()
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: { kind: 'error' } })
  })

  it('ends the check silently when the consumer stops early', async () => {
    const app = await appWith([[start(0), text(0, 'a'), text(0, 'b')]])
    for await (const chunk of app.llm.stream(request)) {
      expect(chunk).toEqual(start(0))
      break
    }
    expect(app.invariants.violations).toEqual([])
  })

  it('can be left out by configuration', async () => {
    const app = await createCheckedApp({ invariants: { only: ['log-grammar'] } })
    app.llm.registerAdapter('scripted', scriptedAdapter([[stop, text(0, 'x')]]))
    expect(await consume(app.llm.stream(request))).toEqual({ chunks: [stop, text(0, 'x')], error: undefined })
    expect(app.invariants.counters.streamsChecked).toBe(0)
  })
})
