import type { Context } from 'cordis'
import { createCheckedApp } from 'dsh-invariants/vitest'
import { BlockAssembler, CallId, type LlmRequest, userText } from 'dsh-llm'
import { deepseek } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FixtureServer, fixture, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

async function app(): Promise<Context> {
  const ctx = await createCheckedApp()
  ctx.llm.registerAdapter(['deepseek'], deepseek({ apiKey: 'sk-ds', baseURL: server.baseURL }))
  return ctx
}

const request = (signal?: AbortSignal): LlmRequest => ({
  provider: 'deepseek',
  model: 'deepseek-chat',
  messages: [userText('weather and time in Paris?')],
  ...(signal === undefined ? {} : { signal }),
})

describe('wired into ctx.llm', () => {
  it('streams through the llm/stream waterfall into a BlockAssembler', async () => {
    const ctx = await app()
    server.reply(sseReply(fixture('parallel-tools.sse')))
    const assembler = new BlockAssembler()
    for await (const chunk of ctx.llm.stream(request())) assembler.push(chunk)
    expect(assembler.blocks()).toEqual([
      { type: 'text', text: 'Checking both.' },
      {
        type: 'tool-call',
        id: CallId('call_weather_01'),
        name: 'get_weather',
        arguments: '{"city": "Paris"}',
      },
      {
        type: 'tool-call',
        id: CallId('call_time_02'),
        name: 'get_time',
        arguments: '{"tz": "Europe/Paris"}',
      },
    ])
    expect(assembler.finishReason()).toEqual({ kind: 'tool-calls' })
    expect(assembler.usage()).toEqual({
      inputTokens: 210,
      outputTokens: 48,
      cacheReadTokens: 0,
      reasoningTokens: 0,
    })
  })

  it('keeps the visible text of a cancelled stream as interrupted blocks', async () => {
    const ctx = await app()
    const text = fixture('text.sse')
    server.reply(
      sseReply(text.subarray(0, text.indexOf('data:', text.indexOf('Hello'))), [], { after: 'hang' }),
    )
    const controller = new AbortController()
    const assembler = new BlockAssembler()
    for await (const chunk of ctx.llm.stream(request(controller.signal))) {
      assembler.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(assembler.finishReason()).toEqual({
      kind: 'aborted',
      failure: {
        code: 'ABORTED',
        message: `${server.baseURL} (model deepseek-chat): the request to ${server.baseURL}/chat/completions was aborted by its signal`,
        requestId: 'req-fixture',
      },
    })
    expect(assembler.interruptedBlocks()).toEqual([{ type: 'text', text: 'Hello' }])
  })
})
