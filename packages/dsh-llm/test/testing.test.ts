import { BlockAssembler, type LlmRequest, type StreamChunk, userText } from 'dsh-llm'
import {
  errorResponse,
  hangUntilAborted,
  reasoningResponse,
  scriptedAdapter,
  textResponse,
  throwAfter,
  toolCallResponse,
  toolCallsResponse,
} from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'

const request: LlmRequest = { provider: 'p', model: 'm', messages: [] }

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const chunk of stream) out.push(chunk)
  return out
}

function assembled(chunks: readonly StreamChunk[]) {
  const a = new BlockAssembler()
  for (const chunk of chunks) a.push(chunk)
  return { blocks: a.blocks(), finish: a.finishReason() }
}

describe('response helpers', () => {
  it('textResponse emits start, deltas, end, usage and finish stop', () => {
    expect(textResponse('hello big world', { deltas: 'words' })).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'hello ' },
      { type: 'text-delta', index: 0, text: 'big ' },
      { type: 'text-delta', index: 0, text: 'world' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'hello big world' } },
      { type: 'usage', usage: { inputTokens: 0, outputTokens: 0 } },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
    expect(textResponse('ab', { deltas: ['a', 'b'] }).filter((c) => c.type === 'text-delta')).toHaveLength(2)
    expect(() => textResponse('ab', { deltas: ['a'] })).toThrow(
      new TypeError('textBlockChunks: deltas join to "a", not "ab"'),
    )
  })

  it('textResponse takes usage and finish overrides', () => {
    const chunks = textResponse('cut', {
      usage: { inputTokens: 7, outputTokens: 1 },
      finish: { kind: 'max-tokens' },
    })
    expect(chunks.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 1 } },
      { type: 'finish', reason: { kind: 'max-tokens' } },
    ])
  })

  it('reasoningResponse puts reasoning at index 0 and text at index 1', () => {
    expect(assembled(reasoningResponse('think', 'answer'))).toEqual({
      blocks: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'answer' },
      ],
      finish: { kind: 'stop' },
    })
  })

  it('toolCallResponse streams the argument JSON in a few deltas and finishes tool-calls', () => {
    const chunks = toolCallResponse('c1', 'read', { path: 'a.ts' })
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id: 'c1', name: 'read', argumentsDelta: '{"pat' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: 'h":"a' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '.ts"}' },
      {
        type: 'block-end',
        index: 0,
        block: { type: 'tool-call', id: 'c1', name: 'read', arguments: '{"path":"a.ts"}' },
      },
      { type: 'usage', usage: { inputTokens: 0, outputTokens: 0 } },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
    expect(assembled(toolCallResponse('c2', 'run', 'not json')).blocks).toEqual([
      { type: 'tool-call', id: 'c2', name: 'run', arguments: 'not json' },
    ])
  })

  it('toolCallsResponse emits parallel calls after optional leading text', () => {
    const chunks = toolCallsResponse(
      [
        { id: 'a', name: 'read', args: { p: 1 } },
        { id: 'b', name: 'list', args: {} },
      ],
      { text: 'Looking.' },
    )
    expect(assembled(chunks)).toEqual({
      blocks: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool-call', id: 'a', name: 'read', arguments: '{"p":1}' },
        { type: 'tool-call', id: 'b', name: 'list', arguments: '{}' },
      ],
      finish: { kind: 'tool-calls' },
    })
  })

  it('errorResponse ends with an error finish after an optional prefix', () => {
    expect(errorResponse('RATE_LIMIT', 'slow down', { retryAfterMs: 200 })).toEqual([
      {
        type: 'finish',
        reason: { kind: 'error', failure: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 200 } },
      },
    ])
  })

  it('returns frozen chunks', () => {
    const [first] = textResponse('x')
    expect(Object.isFrozen(first)).toBe(true)
  })
})

describe('scriptedAdapter', () => {
  it('plays one step per call and records each request frozen, without its signal', async () => {
    const adapter = scriptedAdapter([textResponse('one'), (req, i) => textResponse(`${req.model} #${i}`)])
    const controller = new AbortController()
    const first: LlmRequest = { ...request, messages: [userText('hi')], signal: controller.signal }
    expect(adapter.callCount).toBe(0)
    const stream = adapter.stream(first)
    expect(adapter.callCount).toBe(1)
    expect(assembled(await collect(stream)).blocks).toEqual([{ type: 'text', text: 'one' }])
    expect(assembled(await collect(adapter.stream({ ...request, model: 'gpt' }))).blocks).toEqual([
      { type: 'text', text: 'gpt #1' },
    ])
    expect(adapter.requests).toEqual([
      { provider: 'p', model: 'm', messages: [first.messages[0]] },
      { provider: 'p', model: 'gpt', messages: [] },
    ])
    expect(adapter.requests[0]).not.toHaveProperty('signal')
    expect(Object.isFrozen(adapter.requests[0])).toBe(true)
    expect(Object.isFrozen(adapter.requests[0]?.messages)).toBe(true)
  })

  it('errors clearly when the script runs out', async () => {
    const adapter = scriptedAdapter([textResponse('only')])
    await collect(adapter.stream(request))
    expect(await collect(adapter.stream(request))).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'SCRIPT_EXHAUSTED',
            message: 'scripted adapter: no step for call #2 (script has 1 steps)',
          },
        },
      },
    ])
    expect(adapter.callCount).toBe(2)
  })

  it('delays a step so a later call can finish first', async () => {
    const adapter = scriptedAdapter([{ chunks: textResponse('slow'), delayMs: 30 }, textResponse('fast')])
    const order: string[] = []
    const run = async () => {
      const { blocks } = assembled(await collect(adapter.stream(request)))
      const block = blocks[0]
      order.push(block?.type === 'text' ? block.text : '?')
    }
    await Promise.all([run(), run()])
    expect(order).toEqual(['fast', 'slow'])
  })

  it('hangs until aborted, then finishes aborted', async () => {
    const adapter = scriptedAdapter([hangUntilAborted(textResponse('so far').slice(0, 2))])
    const controller = new AbortController()
    const seen: StreamChunk[] = []
    const done = (async () => {
      for await (const chunk of adapter.stream({ ...request, signal: controller.signal })) seen.push(chunk)
    })()
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(seen.map((c) => c.type)).toEqual(['block-start', 'text-delta'])
    controller.abort()
    await done
    expect(seen[2]).toEqual({
      type: 'finish',
      reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'scripted adapter: call #1 aborted' } },
    })
    expect(seen).toHaveLength(3)
  })

  it('refuses to hang without a signal', async () => {
    const adapter = scriptedAdapter([hangUntilAborted()])
    expect(await collect(adapter.stream(request))).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'INVALID_REQUEST',
            message: 'scripted adapter: call #1 hangs until aborted but has no signal',
          },
        },
      },
    ])
  })

  it('stops a plain step with an aborted finish once the signal aborts', async () => {
    const adapter = scriptedAdapter([textResponse('abc', { deltas: ['a', 'b', 'c'] })])
    const controller = new AbortController()
    const seen: string[] = []
    for await (const chunk of adapter.stream({ ...request, signal: controller.signal })) {
      seen.push(chunk.type === 'text-delta' ? chunk.text : chunk.type)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(seen).toEqual(['block-start', 'a', 'finish'])
  })

  it('throws from the iteration after a prefix with throwAfter', async () => {
    const adapter = scriptedAdapter([throwAfter(new Error('reset'), textResponse('x').slice(0, 1))])
    const seen: StreamChunk[] = []
    await expect(
      (async () => {
        for await (const chunk of adapter.stream(request)) seen.push(chunk)
      })(),
    ).rejects.toThrow('reset')
    expect(seen).toEqual([{ type: 'block-start', index: 0, blockType: 'text' }])
  })
})
