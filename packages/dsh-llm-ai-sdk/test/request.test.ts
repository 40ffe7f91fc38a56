/** Request mapping: what the provider packages put on the wire for a dsh request. */
import { CallId, createAssistantMessage, createToolResultMessage, type LlmRequest, userText } from 'dsh-llm'
import { describe, expect, it } from 'vitest'
import * as fx from './fixtures/anthropic.ts'
import * as ms from './fixtures/mistral.ts'
import { claude, play, run } from './helpers.ts'
import { mistral } from './providers.ts'

const conversation: LlmRequest = {
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  system: 'You are terse.',
  messages: [
    userText('Weather and time in Paris?'),
    createAssistantMessage({
      content: [
        { type: 'reasoning', text: 'Two lookups.', providerData: { anthropic: { signature: 'sig-1' } } },
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', id: CallId('toolu_w'), name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool-call', id: CallId('toolu_t'), name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
      ],
      source: { kind: 'model', provider: 'anthropic', model: 'claude-sonnet-4-5' },
    }),
    createToolResultMessage({ callId: CallId('toolu_w'), content: [{ type: 'text', text: '18°C' }] }),
    createToolResultMessage({
      callId: CallId('toolu_t'),
      content: [{ type: 'text', text: 'time service down' }],
      isError: true,
    }),
  ],
  tools: [
    {
      name: 'get_weather',
      description: 'Weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ],
  temperature: 0.2,
  maxTokens: 512,
  stop: ['END'],
  reasoningEffort: 'low',
}

describe('request mapping through @ai-sdk/anthropic', () => {
  it('system, messages with signed thinking, paired tool results, tools and every call option', async () => {
    const { adapter, recorded, notices } = play([fx.text], claude)
    await run(adapter, conversation)
    const body = JSON.parse(recorded.requests[0]?.body ?? '{}') as Record<string, unknown>
    expect(body.system).toEqual([{ type: 'text', text: 'You are terse.' }])
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Two lookups.', signature: 'sig-1' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_w', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_t', name: 'get_time', input: { tz: 'Europe/Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_w', content: '18°C' },
          { type: 'tool_result', tool_use_id: 'toolu_t', content: 'time service down', is_error: true },
        ],
      },
    ])
    expect(body.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Weather for a city.',
        // The package's own default (fine-grained tool streaming), not the adapter's.
        eager_input_streaming: true,
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    ])
    expect(body.stop_sequences).toEqual(['END'])
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
    // The AI SDK adds the thinking budget to max_tokens, and drops temperature under thinking: reported.
    expect(body.max_tokens).toBe(512 + 1024)
    expect(body.temperature).toBeUndefined()
    expect(notices).toEqual([
      {
        code: 'PROVIDER_WARNING',
        message: expect.stringMatching(
          /^anthropic\.messages model claude-sonnet-4-5: unsupported feature temperature/,
        ),
      },
    ])
  })
})

describe('options a provider has no place for', () => {
  it('reasoningEffort on Mistral is reported, not sent', async () => {
    const { adapter, recorded, notices } = play([ms.text], mistral)
    await run(adapter, {
      provider: 'mistral',
      model: 'mistral-large-latest',
      messages: [userText('hi')],
      reasoningEffort: 'high',
    })
    expect(recorded.requests[0]?.body).not.toContain('high')
    expect(notices).toEqual([
      {
        code: 'UNSUPPORTED_OPTION',
        message:
          'mistral.chat model mistral-large-latest: reasoningEffort "high" was not sent: this adapter knows no reasoning option for provider key "mistral" (set it in providerOptions)',
      },
    ])
  })

  it('a block the prompt cannot carry is an INVALID_REQUEST finish, with no call made', async () => {
    const { adapter, recorded } = play([fx.text], claude)
    const odd = createAssistantMessage({
      id: 'a-odd',
      content: [{ type: 'tool-result', toolCallId: CallId('x'), content: [] }],
      source: { kind: 'model', provider: 'anthropic', model: 'm' },
    })
    const chunks = await run(adapter, { provider: 'anthropic', model: 'm', messages: [userText('hi'), odd] })
    expect(chunks).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'INVALID_REQUEST',
            message:
              "ai-sdk request: assistant message a-odd holds a 'tool-result' block, which the prompt cannot carry there",
          },
        },
      },
    ])
    expect(recorded.requests).toHaveLength(0)
  })
})
