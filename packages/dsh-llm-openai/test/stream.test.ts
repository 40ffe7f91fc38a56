import { CallId, type StreamChunk } from 'dsh-llm'
import { deepseek, openAiCompatible } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prompt, run, types } from './helpers.ts'
import { type FixtureServer, fixture, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

function adapter() {
  return openAiCompatible({ baseURL: server.baseURL, apiKey: 'sk-test' })
}

describe('stream mapping', () => {
  it('maps a plain text stream with OpenAI cached-token usage to disjoint counts', async () => {
    server.reply(sseReply(fixture('text.sse')))
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'text-delta', index: 0, text: ', world' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Hello, world' } },
      {
        type: 'usage',
        usage: { inputTokens: 20, outputTokens: 4, cacheReadTokens: 100, reasoningTokens: 0 },
      },
      { type: 'finish', reason: { kind: 'stop' } },
    ] satisfies StreamChunk[])
  })

  it('maps DeepSeek reasoning_content and text to two blocks, skipping keep-alive comments', async () => {
    server.reply(sseReply(fixture('reasoning-text.sse')))
    expect(await run(deepseek({ apiKey: 'sk-ds', baseURL: server.baseURL }), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'The user asks' },
      { type: 'reasoning-delta', index: 0, text: ' for 2 + 2.' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'The user asks for 2 + 2.' } },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, text: '2 + 2' },
      { type: 'text-delta', index: 1, text: ' = 4.' },
      { type: 'block-end', index: 1, block: { type: 'text', text: '2 + 2 = 4.' } },
      {
        type: 'usage',
        usage: { inputTokens: 6, outputTokens: 25, cacheReadTokens: 24, reasoningTokens: 18 },
      },
      { type: 'finish', reason: { kind: 'stop' } },
    ] satisfies StreamChunk[])
  })

  it('keys two parallel tool calls by their provider index while their argument deltas interleave', async () => {
    server.reply(sseReply(fixture('parallel-tools.sse')))
    const weather = CallId('call_weather_01')
    const time = CallId('call_time_02')
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Checking both.' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Checking both.' } },
      { type: 'block-start', index: 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 1, id: weather, name: 'get_weather', argumentsDelta: '' },
      { type: 'block-start', index: 2, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 2, id: time, name: 'get_time', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 1, id: weather, argumentsDelta: '{"city": ' },
      { type: 'tool-call-delta', index: 2, id: time, argumentsDelta: '{"tz": "Europe/' },
      { type: 'tool-call-delta', index: 1, id: weather, argumentsDelta: '"Paris"}' },
      { type: 'tool-call-delta', index: 2, id: time, argumentsDelta: 'Paris"}' },
      {
        type: 'block-end',
        index: 1,
        block: { type: 'tool-call', id: weather, name: 'get_weather', arguments: '{"city": "Paris"}' },
      },
      {
        type: 'block-end',
        index: 2,
        block: { type: 'tool-call', id: time, name: 'get_time', arguments: '{"tz": "Europe/Paris"}' },
      },
      {
        type: 'usage',
        usage: { inputTokens: 210, outputTokens: 48, cacheReadTokens: 0, reasoningTokens: 0 },
      },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ] satisfies StreamChunk[])
  })

  it('maps finish_reason length to max-tokens and ends without usage when none was sent', async () => {
    server.reply(sseReply(fixture('length.sse')))
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Once upon' },
      { type: 'text-delta', index: 0, text: ' a time' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Once upon a time' } },
      { type: 'finish', reason: { kind: 'max-tokens' } },
    ] satisfies StreamChunk[])
  })

  it('reads CRLF line endings and a CR split from its LF across network writes', async () => {
    const crlf = Buffer.from(fixture('text.sse').toString('utf8').replaceAll('\n', '\r\n'))
    const firstCr = crlf.indexOf('\r')
    server.reply(sseReply(crlf, [firstCr + 1], { delayMs: 5 }))
    const chunks = await run(adapter(), prompt())
    expect(types(chunks)).toEqual(['block-start', 'text-delta', 'text-delta', 'block-end', 'usage', 'finish'])
    expect(chunks[3]).toEqual({ type: 'block-end', index: 0, block: { type: 'text', text: 'Hello, world' } })
  })

  it('joins an event whose JSON spans several data lines, ignoring event and id fields', async () => {
    server.reply(sseReply(fixture('multiline-data.sse')))
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'two' },
      { type: 'text-delta', index: 0, text: ' lines' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'two lines' } },
      { type: 'finish', reason: { kind: 'stop' } },
    ] satisfies StreamChunk[])
  })

  it('accepts a stream that ends after its finish_reason without [DONE]', async () => {
    const withoutDone = fixture('length.sse').toString('utf8').replace('data: [DONE]\n\n', '')
    server.reply(sseReply(Buffer.from(withoutDone)))
    expect(types(await run(adapter(), prompt()))).toEqual([
      'block-start',
      'text-delta',
      'text-delta',
      'block-end',
      'finish',
    ])
  })
})
