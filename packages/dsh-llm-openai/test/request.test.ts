import {
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  type LlmRequest,
  userText,
} from 'dsh-llm'
import { deepseek, openAiCompatible } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from './helpers.ts'
import { type FixtureServer, fixture, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const weather = CallId('call_w1')
const time = CallId('call_t2')

/** A conversation with every kind of message the mapping handles. */
const conversation: LlmRequest = {
  provider: 'deepseek',
  model: 'deepseek-reasoner',
  system: 'You are terse.',
  messages: [
    createUserMessage({
      id: 'u1',
      content: [{ type: 'text', text: 'Weather and time in Paris?' }],
      source: { kind: 'user' },
    }),
    createUserMessage({
      id: 'u2',
      content: [{ type: 'text', text: 'Today is Monday.' }],
      source: { kind: 'plugin', plugin: 'calendar' },
    }),
    createAssistantMessage({
      id: 'a1',
      content: [
        { type: 'reasoning', text: 'Two lookups, ' },
        { type: 'reasoning', text: 'in parallel.' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', id: weather, name: 'get_weather', arguments: '{"city": "Paris"}' },
        { type: 'tool-call', id: time, name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
      ],
      source: { kind: 'model', provider: 'deepseek', model: 'deepseek-reasoner' },
    }),
    createToolResultMessage({ id: 'r1', callId: weather, content: [{ type: 'text', text: '18°C, cloudy' }] }),
    createToolResultMessage({
      id: 'r2',
      callId: time,
      content: [{ type: 'text', text: 'time service down' }],
      isError: true,
    }),
    createUserMessage({
      id: 'u3',
      content: [
        { type: 'text', text: 'Also: ' },
        { type: 'text', text: 'in Fahrenheit.' },
      ],
      source: { kind: 'user' },
    }),
  ],
  tools: [
    {
      name: 'get_weather',
      description: 'Current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ],
  temperature: 0.2,
  maxTokens: 512,
  stop: ['END'],
  reasoningEffort: 'high',
}

const toolsOnWire = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
]

function wireMessages(assistant: Record<string, unknown>) {
  return [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Weather and time in Paris?' },
    { role: 'user', content: 'Today is Monday.' },
    assistant,
    { role: 'tool', tool_call_id: 'call_w1', content: '18°C, cloudy' },
    { role: 'tool', tool_call_id: 'call_t2', content: 'time service down' },
    { role: 'user', content: 'Also: in Fahrenheit.' },
  ]
}

const assistantToolCalls = [
  { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
  { id: 'call_t2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
]

async function sent(adapterRun: () => Promise<unknown>) {
  const before = server.requests.length
  server.reply(sseReply(fixture('text.sse')))
  await adapterRun()
  const request = server.requests[before]
  if (request === undefined) throw new Error('the server received no request')
  return { ...request, json: JSON.parse(request.body) as unknown }
}

describe('request mapping', () => {
  it('posts the whole conversation with reasoning omitted by default, plus headers', async () => {
    const adapter = openAiCompatible({
      baseURL: `${server.baseURL}/`,
      apiKey: 'sk-test',
      headers: { 'X-Trace': 'abc' },
    })
    const request = await sent(() => run(adapter, conversation))
    expect(request.method).toBe('POST')
    expect(request.url).toBe('/v1/chat/completions')
    expect(request.headers.authorization).toBe('Bearer sk-test')
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers.accept).toBe('text/event-stream')
    expect(request.headers['x-trace']).toBe('abc')
    expect(request.json).toEqual({
      model: 'deepseek-reasoner',
      messages: wireMessages({ role: 'assistant', content: 'Checking.', tool_calls: assistantToolCalls }),
      stream: true,
      tools: toolsOnWire,
      temperature: 0.2,
      max_tokens: 512,
      stop: ['END'],
      reasoning_effort: 'high',
      stream_options: { include_usage: true },
    })
  })

  it('replays reasoning as reasoning_content under the DeepSeek preset', async () => {
    const adapter = deepseek({ apiKey: 'sk-ds', baseURL: server.baseURL })
    const request = await sent(() => run(adapter, conversation))
    expect(request.headers.authorization).toBe('Bearer sk-ds')
    expect(request.json).toEqual({
      model: 'deepseek-reasoner',
      messages: wireMessages({
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'Two lookups, in parallel.',
        tool_calls: assistantToolCalls,
      }),
      stream: true,
      tools: toolsOnWire,
      temperature: 0.2,
      max_tokens: 512,
      stop: ['END'],
      reasoning_effort: 'high',
      stream_options: { include_usage: true },
    })
  })

  it('leaves out replay metadata it cannot send: providerData never reaches the wire', async () => {
    const adapter = deepseek({ apiKey: 'sk-ds', baseURL: server.baseURL })
    const signed: LlmRequest = {
      ...conversation,
      messages: conversation.messages.map((message) =>
        message.role !== 'assistant'
          ? message
          : {
              ...message,
              content: message.content.map((block) =>
                block.type === 'reasoning' || block.type === 'tool-call'
                  ? { ...block, providerData: { anthropic: { signature: 'sig-not-for-openai' } } }
                  : block,
              ),
            },
      ),
    }
    const request = await sent(() => run(adapter, signed))
    expect(request.body).not.toContain('sig-not-for-openai')
    expect(request.body).not.toContain('providerData')
    expect(request.json).toEqual({
      model: 'deepseek-reasoner',
      messages: wireMessages({
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'Two lookups, in parallel.',
        tool_calls: assistantToolCalls,
      }),
      stream: true,
      tools: toolsOnWire,
      temperature: 0.2,
      max_tokens: 512,
      stop: ['END'],
      reasoning_effort: 'high',
      stream_options: { include_usage: true },
    })
  })

  it('in thinking mode gives every tool-call turn a reasoning_content, empty when it had no reasoning', async () => {
    const adapter = deepseek({ apiKey: 'sk-ds', baseURL: server.baseURL })
    const model = { kind: 'model', provider: 'deepseek', model: 'deepseek-v4' } as const
    const history = [
      userText('go'),
      createAssistantMessage({
        content: [{ type: 'tool-call', id: weather, name: 'get_weather', arguments: '{}' }],
        source: model,
      }),
      createToolResultMessage({ callId: weather, content: [{ type: 'text', text: 'sunny' }] }),
      createAssistantMessage({ content: [{ type: 'text', text: 'Sunny.' }], source: model }),
    ]
    const toolTurn = (extra: Record<string, unknown>) => ({
      role: 'assistant',
      content: null,
      ...extra,
      tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
    })
    const thinking = await sent(() =>
      run(adapter, {
        provider: 'deepseek',
        model: 'deepseek-v4',
        reasoningEffort: 'high',
        messages: history,
      }),
    )
    expect((thinking.json as { messages: unknown[] }).messages.slice(1, 4)).toEqual([
      toolTurn({ reasoning_content: '' }),
      { role: 'tool', tool_call_id: 'call_w1', content: 'sunny' },
      { role: 'assistant', content: 'Sunny.' },
    ])
    const plain = await sent(() =>
      run(adapter, { provider: 'deepseek', model: 'deepseek-chat', messages: history }),
    )
    expect((plain.json as { messages: unknown[] }).messages[1]).toEqual(toolTurn({}))
  })

  it('honours the body options: omit replay on DeepSeek, max_completion_tokens, no effort, no usage, extraBody', async () => {
    const adapter = deepseek({
      apiKey: 'sk-ds',
      baseURL: server.baseURL,
      reasoningReplay: 'omit',
      maxTokensField: 'max_completion_tokens',
      sendReasoningEffort: false,
      includeUsage: false,
      extraBody: { thinking: { type: 'enabled' } },
    })
    const request = await sent(() => run(adapter, conversation))
    expect(request.json).toEqual({
      model: 'deepseek-reasoner',
      messages: wireMessages({ role: 'assistant', content: 'Checking.', tool_calls: assistantToolCalls }),
      stream: true,
      tools: toolsOnWire,
      temperature: 0.2,
      max_completion_tokens: 512,
      stop: ['END'],
      thinking: { type: 'enabled' },
    })
  })

  it('sends a tool-only assistant message with null content and no Authorization without an apiKey', async () => {
    const adapter = openAiCompatible({ baseURL: server.baseURL })
    const request = await sent(() =>
      run(adapter, {
        provider: 'local',
        model: 'llama',
        messages: [
          userText('go'),
          createAssistantMessage({
            content: [{ type: 'tool-call', id: weather, name: 'get_weather', arguments: '{}' }],
            source: { kind: 'model', provider: 'local', model: 'llama' },
          }),
          createToolResultMessage({ callId: weather, content: [] }),
        ],
      }),
    )
    expect(request.headers.authorization).toBeUndefined()
    expect(request.json).toEqual({
      model: 'llama',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_w1', content: '' },
      ],
      stream: true,
      stream_options: { include_usage: true },
    })
  })

  it('refuses a block the wire format cannot carry as an INVALID_REQUEST finish, without calling the server', async () => {
    const before = server.requests.length
    const adapter = openAiCompatible({ baseURL: server.baseURL, apiKey: 'sk-test' })
    const chunks = await run(adapter, {
      provider: 'openai',
      model: 'gpt',
      messages: [
        createUserMessage({
          id: 'u9',
          content: [{ type: 'reasoning', text: 'a user cannot send reasoning' }],
          source: { kind: 'user' },
        }),
      ],
    })
    expect(chunks).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'INVALID_REQUEST',
            message:
              "openai-compatible request: user message u9 holds a 'reasoning' block, which this wire format cannot carry there",
          },
        },
      },
    ])
    expect(server.requests.length).toBe(before)
  })

  it('rejects invalid options when the adapter is created', () => {
    expect(() => openAiCompatible({ baseURL: 'api.example.com' })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: 'openAiCompatible: baseURL must be an absolute http(s) URL, got "api.example.com"',
      }),
    )
    expect(() => openAiCompatible({ baseURL: server.baseURL, timeoutMs: 0 })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: 'openAiCompatible: timeoutMs must be a positive number of milliseconds, got 0',
      }),
    )
  })
})
