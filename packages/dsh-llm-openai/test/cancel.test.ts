import type { LlmFailure, StreamChunk } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prompt, run } from './helpers.ts'
import { type FixtureServer, fixture, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

/** The first three events of `text.sse` (the third holds "Hello"), then the server goes quiet. */
function stallAfterHello(): Buffer {
  const text = fixture('text.sse')
  return text.subarray(0, text.indexOf('data:', text.indexOf('Hello')))
}

const url = () => `${server.baseURL}/chat/completions`

function finish(kind: 'error' | 'aborted', failure: LlmFailure): StreamChunk {
  return kind === 'error'
    ? { type: 'finish', reason: { kind: 'error', failure } }
    : { type: 'finish', reason: { kind: 'aborted', failure } }
}

describe('timeouts and cancellation', () => {
  it('a server that stalls mid-stream times out with TIMEOUT after the delivered deltas', async () => {
    server.reply(sseReply(stallAfterHello(), [], { after: 'hang' }))
    const adapter = openAiCompatible({ baseURL: server.baseURL, apiKey: 'sk-test', timeoutMs: 150 })
    const started = Date.now()
    const chunks = await run(adapter, prompt())
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hello' },
      finish('error', {
        code: 'TIMEOUT',
        message: `${server.baseURL} (model test-model): no data from ${url()} for 150 ms (timeoutMs)`,
        requestId: 'req-fixture',
      }),
    ] satisfies StreamChunk[])
    await server.requests.at(-1)?.closed
  })

  it('a server that never answers times out before any chunk', async () => {
    server.reply({ silent: true })
    const adapter = openAiCompatible({ baseURL: server.baseURL, timeoutMs: 100 })
    expect(await run(adapter, prompt())).toEqual([
      finish('error', {
        code: 'TIMEOUT',
        message: `${server.baseURL} (model test-model): no data from ${url()} for 100 ms (timeoutMs)`,
      }),
    ])
  })

  it('a slow server that keeps sending within timeoutMs is not timed out', async () => {
    const text = fixture('text.sse')
    const cuts: number[] = []
    for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n', end + 2)) cuts.push(end + 2)
    cuts.pop()
    server.reply(sseReply(text, cuts, { delayMs: 60 }))
    const adapter = openAiCompatible({ baseURL: server.baseURL, timeoutMs: 200 })
    const chunks = await run(adapter, prompt())
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
  })

  it('aborting the signal mid-stream ends with an aborted finish and hangs up on the server', async () => {
    server.reply(sseReply(stallAfterHello(), [], { after: 'hang' }))
    const controller = new AbortController()
    const adapter = openAiCompatible({ baseURL: server.baseURL, apiKey: 'sk-test' })
    const chunks: StreamChunk[] = []
    for await (const chunk of adapter.stream(prompt('hi', { signal: controller.signal }))) {
      chunks.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hello' },
      finish('aborted', {
        code: 'ABORTED',
        message: `${server.baseURL} (model test-model): the request to ${url()} was aborted by its signal`,
        requestId: 'req-fixture',
      }),
    ] satisfies StreamChunk[])
    await server.requests.at(-1)?.closed
  })

  it('aborting while waiting for the response headers ends with an aborted finish', async () => {
    server.reply({ silent: true })
    const controller = new AbortController()
    const adapter = openAiCompatible({ baseURL: server.baseURL })
    setTimeout(() => controller.abort(), 30)
    expect(await run(adapter, prompt('hi', { signal: controller.signal }))).toEqual([
      finish('aborted', {
        code: 'ABORTED',
        message: `${server.baseURL} (model test-model): the request to ${url()} was aborted by its signal`,
      }),
    ])
    await server.requests.at(-1)?.closed
  })

  it('an already-aborted signal sends nothing', async () => {
    const before = server.requests.length
    const adapter = openAiCompatible({ baseURL: server.baseURL })
    expect(await run(adapter, prompt('hi', { signal: AbortSignal.abort() }))).toEqual([
      finish('aborted', {
        code: 'ABORTED',
        message: `${server.baseURL} (model test-model): the request to ${url()} was aborted by its signal`,
      }),
    ])
    expect(server.requests.length).toBe(before)
  })

  it('a consumer that stops iterating early closes the connection', async () => {
    server.reply(sseReply(stallAfterHello(), [], { after: 'hang' }))
    const adapter = openAiCompatible({ baseURL: server.baseURL })
    const seen: string[] = []
    for await (const chunk of adapter.stream(prompt())) {
      seen.push(chunk.type)
      if (chunk.type === 'text-delta') break
    }
    expect(seen).toEqual(['block-start', 'text-delta'])
    await server.requests.at(-1)?.closed
  })
})
