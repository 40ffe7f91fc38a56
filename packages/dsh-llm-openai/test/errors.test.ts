import { CallId, type LlmFailure, type StreamChunk } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { prompt, run } from './helpers.ts'
import { type FixtureServer, fixture, type Reply, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())
afterEach(() => {
  vi.useRealTimers()
})

function adapter() {
  return openAiCompatible({ baseURL: server.baseURL, apiKey: 'sk-test' })
}

/** How every failure message of these calls begins: the provider label and the model. */
function where(): string {
  return `${server.baseURL} (model test-model)`
}

function errorFinish(failure: LlmFailure): StreamChunk {
  return { type: 'finish', reason: { kind: 'error', failure } }
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return {
    status,
    headers: { 'content-type': 'application/json', ...headers },
    writes: [JSON.stringify(body)],
  }
}

describe('HTTP errors become one terminal finish chunk', () => {
  const cases: { name: string; reply: Reply; failure: LlmFailure }[] = [
    {
      name: '401 → AUTH, with the x-request-id header',
      reply: json(
        401,
        {
          error: {
            message: 'Incorrect API key provided: sk-test.',
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        },
        { 'x-request-id': 'req-401' },
      ),
      failure: {
        code: 'AUTH',
        message: 'HTTP 401 invalid_api_key: Incorrect API key provided: [redacted]. [request req-401]',
        providerCode: 'invalid_api_key',
        status: 401,
        requestId: 'req-401',
      },
    },
    {
      name: '403 with a plain-text body → AUTH',
      reply: {
        status: 403,
        headers: { 'content-type': 'text/plain' },
        writes: ['Forbidden: region not supported\n'],
      },
      failure: {
        code: 'AUTH',
        message: 'HTTP 403 Forbidden, text/plain body: Forbidden: region not supported',
        status: 403,
      },
    },
    {
      name: '429 → RATE_LIMIT with Retry-After seconds',
      reply: json(
        429,
        {
          error: {
            message: 'Rate limit reached for requests',
            type: 'requests',
            code: 'rate_limit_exceeded',
          },
        },
        { 'retry-after': '7' },
      ),
      failure: {
        code: 'RATE_LIMIT',
        message: 'HTTP 429 rate_limit_exceeded: Rate limit reached for requests',
        providerCode: 'rate_limit_exceeded',
        status: 429,
        retryAfterMs: 7000,
      },
    },
    {
      name: '500 → SERVER',
      reply: json(500, { error: { message: 'The server had an error while processing your request.' } }),
      failure: {
        code: 'SERVER',
        message: 'HTTP 500: The server had an error while processing your request.',
        status: 500,
      },
    },
    {
      name: '503 with an empty body → SERVER with the status line',
      reply: { status: 503, writes: [] },
      failure: { code: 'SERVER', message: 'HTTP 503 Service Unavailable', status: 503 },
    },
    {
      name: '400 with a context-length message → CONTEXT_WINDOW_EXCEEDED',
      reply: json(400, {
        error: {
          message:
            "This model's maximum context length is 131072 tokens. However, you requested 140210 tokens (140210 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request_error',
        },
      }),
      failure: {
        code: 'CONTEXT_WINDOW_EXCEEDED',
        message:
          "HTTP 400 invalid_request_error: This model's maximum context length is 131072 tokens. However, you requested 140210 tokens (140210 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
        providerCode: 'invalid_request_error',
        status: 400,
      },
    },
    {
      name: '400 otherwise → INVALID_REQUEST',
      reply: json(400, {
        error: {
          message: "Invalid value for 'temperature': must be at most 2.",
          type: 'invalid_request_error',
        },
      }),
      failure: {
        code: 'INVALID_REQUEST',
        message: "HTTP 400 invalid_request_error: Invalid value for 'temperature': must be at most 2.",
        providerCode: 'invalid_request_error',
        status: 400,
      },
    },
    {
      name: '404 with a string error about the model and a body id → MODEL_NOT_FOUND carrying that id',
      reply: json(404, { id: 'req-body-404', error: "model 'llama9' not found" }),
      failure: {
        code: 'MODEL_NOT_FOUND',
        message: "HTTP 404: model 'llama9' not found [request req-body-404]",
        status: 404,
        requestId: 'req-body-404',
      },
    },
  ]

  for (const { name, reply, failure } of cases) {
    it(name, async () => {
      server.reply(reply)
      expect(await run(adapter(), prompt())).toEqual([
        errorFinish({ ...failure, message: `${where()}: ${failure.message}` }),
      ])
    })
  }

  it('429 → RATE_LIMIT with Retry-After as an HTTP date', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-11-30T12:00:00.000Z'))
    server.reply(
      json(429, { error: { message: 'Slow down' } }, { 'retry-after': 'Mon, 30 Nov 2026 12:00:30 GMT' }),
    )
    expect(await run(adapter(), prompt())).toEqual([
      errorFinish({
        code: 'RATE_LIMIT',
        message: `${where()}: HTTP 429: Slow down`,
        status: 429,
        retryAfterMs: 30_000,
      }),
    ])
  })
})

/** An event stream of one content delta followed by a chunk with `finish_reason: reason`. */
function finishing(reason: string, delta: Record<string, unknown> = { content: 'ok' }): Buffer {
  const events = [
    { id: 'chatcmpl-F1', choices: [{ index: 0, delta, finish_reason: null }] },
    { id: 'chatcmpl-F1', choices: [{ index: 0, delta: {}, finish_reason: reason }] },
  ]
  return Buffer.from(
    `${events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')}data: [DONE]\n\n`,
  )
}

describe('finish reasons that are failures', () => {
  it('content_filter → CONTENT_FILTERED', async () => {
    server.reply(sseReply(finishing('content_filter')))
    expect((await run(adapter(), prompt())).at(-1)).toEqual(
      errorFinish({
        code: 'CONTENT_FILTERED',
        message: `${where()} stopped the output (finish_reason content_filter)`,
        providerCode: 'content_filter',
        requestId: 'req-fixture',
      }),
    )
  })

  it("DeepSeek's insufficient_system_resource → SERVER", async () => {
    server.reply(sseReply(finishing('insufficient_system_resource')))
    expect((await run(adapter(), prompt())).at(-1)).toEqual(
      errorFinish({
        code: 'SERVER',
        message: `${where()} interrupted the output (finish_reason insufficient_system_resource)`,
        providerCode: 'insufficient_system_resource',
        requestId: 'req-fixture',
      }),
    )
  })

  it('end-of-sequence aliases (eos, eos_token, stop_sequence) read as stop; max_tokens as max-tokens', async () => {
    for (const reason of ['eos', 'eos_token', 'stop_sequence']) {
      server.reply(sseReply(finishing(reason)))
      expect((await run(adapter(), prompt())).at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    }
    server.reply(sseReply(finishing('max_tokens')))
    expect((await run(adapter(), prompt())).at(-1)).toEqual({
      type: 'finish',
      reason: { kind: 'max-tokens' },
    })
  })

  it('a tool call whose first delta has no id gets one made of the completion id and its position', async () => {
    const call = { tool_calls: [{ index: 0, type: 'function', function: { name: 'ls', arguments: '{}' } }] }
    server.reply(sseReply(finishing('tool_calls', call)))
    const id = CallId('chatcmpl-F1-tool-0')
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id, name: 'ls', argumentsDelta: '{}' },
      { type: 'block-end', index: 0, block: { type: 'tool-call', id, name: 'ls', arguments: '{}' } },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ] satisfies StreamChunk[])
  })

  it('a retry-after-ms header wins over Retry-After', async () => {
    server.reply(
      json(429, { error: { message: 'Too many' } }, { 'retry-after-ms': '1500', 'retry-after': '9' }),
    )
    expect(await run(adapter(), prompt())).toEqual([
      errorFinish({
        code: 'RATE_LIMIT',
        message: `${where()}: HTTP 429: Too many`,
        status: 429,
        retryAfterMs: 1500,
      }),
    ])
  })
})

describe('broken streams', () => {
  it('a stream cut mid tool call (no finish_reason, no [DONE]) is a retryable TRANSPORT failure after the deltas it delivered', async () => {
    server.reply(sseReply(fixture('cut-mid-tool.sse')))
    const id = CallId('call_read_03')
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id, name: 'read_file', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 0, id, argumentsDelta: '{"path": "src/' },
      errorFinish({
        code: 'TRANSPORT',
        message: `${where()}: the stream ended after 2 SSE events with neither a finish_reason nor [DONE]; the answer is incomplete`,
        requestId: 'req-fixture',
      }),
    ] satisfies StreamChunk[])
  })

  it('without an x-request-id header, a failure carries the streamed completion id', async () => {
    server.reply({
      ...sseReply(fixture('cut-mid-tool.sse')),
      headers: { 'content-type': 'text/event-stream' },
    })
    const chunks = await run(adapter(), prompt())
    expect(chunks.at(-1)).toEqual(
      errorFinish({
        code: 'TRANSPORT',
        message: `${where()}: the stream ended after 2 SSE events with neither a finish_reason nor [DONE]; the answer is incomplete`,
        requestId: 'chatcmpl-C3',
      }),
    )
  })

  it('malformed JSON ends the stream with MALFORMED_RESPONSE naming the event', async () => {
    const sse = fixture('malformed-json.sse')
    server.reply(sseReply(sse))
    // The reason is the runtime's own JSON.parse message for the event's data, and V8 words it
    // differently across Node lines: Node 20 says "Unterminated string in JSON at position 99",
    // Node 22 and 24 add " (line 1 column 100)".
    const data = sse.toString('utf8').split('\n\n')[1]?.slice('data: '.length) ?? ''
    const reason = parseErrorMessage(data)
    expect(reason).toMatch(/^Unterminated string in JSON at position 99( \(line 1 column 100\))?$/)
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Partial' },
      errorFinish({
        code: 'MALFORMED_RESPONSE',
        message: `${where()}: SSE event 2 is not valid JSON: ${reason}`,
        requestId: 'req-fixture',
      }),
    ] satisfies StreamChunk[])
  })

  it('an in-band error event becomes a SERVER failure', async () => {
    const body = [
      'data: {"id":"chatcmpl-E7","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}',
      '',
      'data: {"error":{"message":"upstream overloaded","type":"server_error","code":503}}',
      '',
      '',
    ].join('\n')
    server.reply(sseReply(Buffer.from(body)))
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hel' },
      errorFinish({
        code: 'SERVER',
        message: `${where()}: error event server_error: upstream overloaded`,
        providerCode: 'server_error',
        requestId: 'req-fixture',
      }),
    ] satisfies StreamChunk[])
  })

  it('a 200 JSON answer instead of an event stream is MALFORMED_RESPONSE', async () => {
    server.reply(json(200, { id: 'chatcmpl-J8', choices: [] }, { 'x-request-id': 'req-json' }))
    expect(await run(adapter(), prompt())).toEqual([
      errorFinish({
        code: 'MALFORMED_RESPONSE',
        message: `${where()}: ${server.baseURL}/chat/completions answered 200 with application/json instead of an event stream`,
        status: 200,
        requestId: 'req-json',
      }),
    ])
  })

  it('a socket destroyed mid-stream is TRANSPORT', async () => {
    const text = fixture('text.sse')
    const thirdEvent = text.indexOf('data:', text.indexOf('data:', 10) + 10)
    server.reply(sseReply(text.subarray(0, thirdEvent + 20), [], { after: 'destroy', delayMs: 5 }))
    const chunks = await run(adapter(), prompt())
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hello' },
      errorFinish({
        code: 'TRANSPORT',
        message: `${where()}: POST ${server.baseURL}/chat/completions failed: terminated: other side closed`,
        requestId: 'req-fixture',
      }),
    ])
  })

  it('a refused connection is TRANSPORT', async () => {
    const closed = await startServer()
    await closed.close()
    const chunks = await run(openAiCompatible({ baseURL: closed.baseURL }), prompt())
    const port = new URL(closed.baseURL).port
    expect(chunks).toEqual([
      errorFinish({
        code: 'TRANSPORT',
        message: `${closed.baseURL} (model test-model): POST ${closed.baseURL}/chat/completions failed: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`,
      }),
    ])
  })
})

/** The message this runtime's `JSON.parse` throws for `text` (which must not parse). */
function parseErrorMessage(text: string): string {
  try {
    JSON.parse(text)
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
  throw new Error(`expected ${JSON.stringify(text)} not to parse`)
}
