/**
 * Recorded responses of Google, OpenAI Responses, Mistral and Bedrock played through their real
 * provider packages (no network), each with the stream grammar checked by the mounted invariants.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { describe, expect, it } from 'vitest'
import * as bd from './fixtures/bedrock.ts'
import * as gg from './fixtures/google.ts'
import * as ms from './fixtures/mistral.ts'
import * as oa from './fixtures/openai-responses.ts'
import { assemble, play, prompt, run } from './helpers.ts'
import { bedrock, gemini, mistral, openaiResponses } from './providers.ts'
import type { Recorded } from './recorded.ts'

type Case = readonly [name: string, fixture: Recorded, expected: unknown]

function suite(
  label: string,
  model: (fetch: typeof globalThis.fetch) => LanguageModelV3,
  cases: readonly Case[],
) {
  describe(label, () => {
    for (const [name, fixture, expected] of cases) {
      it(name, async () => {
        const { adapter } = play([fixture], model)
        const result = assemble(await run(adapter, prompt()))
        // Gemini has no call ids: the AI SDK makes random ones. Only their presence is asserted.
        const blocks = result.blocks.map((block) =>
          block.type === 'tool-call' && label.startsWith('Google')
            ? { ...block, id: block.id.length > 0 }
            : block,
        )
        expect({ ...result, blocks }).toEqual(expected)
      })
    }
  })
}

const err = (code: string, extra: Record<string, unknown>, message: string) => ({
  blocks: [],
  finish: { kind: 'error', failure: { code, message, ...extra } },
  usage: undefined,
})

const G = 'google.generative-ai model gemini-2.5-flash'
suite('Google Gemini through @ai-sdk/google', gemini, [
  [
    'text',
    gg.text,
    {
      blocks: [{ type: 'text', text: 'The capital of France is Paris.' }],
      finish: { kind: 'stop' },
      usage: { inputTokens: 9, outputTokens: 7, cacheReadTokens: 0, reasoningTokens: 0 },
    },
  ],
  [
    'thought summary, then a function call carrying its thought signature',
    gg.thoughtSignature,
    {
      blocks: [
        { type: 'reasoning', text: 'The user asks for the weather; I will call get_weather.' },
        {
          type: 'tool-call',
          id: true,
          name: 'get_weather',
          arguments: '{"location":"Paris"}',
          providerData: { google: { thoughtSignature: gg.THOUGHT_SIGNATURE } },
        },
      ],
      finish: { kind: 'tool-calls' },
      usage: { inputTokens: 60, outputTokens: 52, cacheReadTokens: 0, reasoningTokens: 40 },
    },
  ],
  [
    'parallel function calls',
    gg.parallelCalls,
    {
      blocks: [
        { type: 'tool-call', id: true, name: 'power_disco_ball', arguments: '{"power":true}' },
        { type: 'tool-call', id: true, name: 'start_music', arguments: '{"energetic":true,"loud":true}' },
      ],
      finish: { kind: 'tool-calls' },
      usage: { inputTokens: 120, outputTokens: 25, cacheReadTokens: 0, reasoningTokens: 0 },
    },
  ],
  [
    'cached content tokens are cache reads',
    gg.cached,
    {
      blocks: [{ type: 'text', text: 'Summarized.' }],
      finish: { kind: 'stop' },
      usage: { inputTokens: 52, outputTokens: 4, cacheReadTokens: 2048, reasoningTokens: 0 },
    },
  ],
  [
    'MAX_TOKENS',
    gg.maxTokens,
    {
      blocks: [{ type: 'text', text: 'Once upon a time' }],
      finish: { kind: 'max-tokens' },
      usage: { inputTokens: 5, outputTokens: 4, cacheReadTokens: 0, reasoningTokens: 0 },
    },
  ],
  [
    'SAFETY stop',
    gg.safety,
    {
      blocks: [],
      finish: {
        kind: 'error',
        failure: {
          code: 'CONTENT_FILTERED',
          providerCode: 'SAFETY',
          message: `${G} stopped the output (SAFETY)`,
        },
      },
      usage: { inputTokens: 12, outputTokens: 0, cacheReadTokens: 0, reasoningTokens: 0 },
    },
  ],
  [
    '429 RESOURCE_EXHAUSTED',
    gg.exhausted429,
    err(
      'RATE_LIMIT',
      { status: 429, retryAfterMs: 30000, requestId: 'goog-req-429', providerCode: 'RESOURCE_EXHAUSTED' },
      `${G} answered with HTTP 429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).`,
    ),
  ],
  [
    '400 "API key not valid" is AUTH',
    gg.badKey400,
    err(
      'AUTH',
      { status: 400, providerCode: 'INVALID_ARGUMENT' },
      `${G} answered with HTTP 400 INVALID_ARGUMENT: API key not valid. Please pass a valid API key.`,
    ),
  ],
  [
    '403 PERMISSION_DENIED',
    gg.denied403,
    err(
      'AUTH',
      { status: 403, providerCode: 'PERMISSION_DENIED' },
      `${G} answered with HTTP 403 PERMISSION_DENIED: Your API key doesn't have the required permissions.`,
    ),
  ],
  [
    '503 UNAVAILABLE (overloaded) is a retryable SERVER failure',
    gg.unavailable503,
    err(
      'SERVER',
      { status: 503, providerCode: 'UNAVAILABLE' },
      `${G} answered with HTTP 503 UNAVAILABLE: The model is overloaded. Please try again later.`,
    ),
  ],
])

const O = 'openai.responses model o4-mini'
const item = (itemId: string) => ({ openai: { itemId } })
suite('OpenAI Responses through @ai-sdk/openai', openaiResponses, [
  [
    'text (the message item id kept for replay)',
    oa.text,
    {
      blocks: [
        {
          type: 'text',
          text: 'Hi there!',
          providerData: item('msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654'),
        },
      ],
      finish: { kind: 'stop' },
      usage: { inputTokens: 37, outputTokens: 11, cacheReadTokens: 0, reasoningTokens: 0 },
    },
  ],
  [
    'reasoning summary with its item id and encrypted content',
    oa.reasoning,
    {
      blocks: [
        {
          type: 'reasoning',
          text: '**Answering a simple question**',
          providerData: {
            openai: {
              itemId: 'rs_6820f383d7c08191846711c5df8233bc',
              reasoningEncryptedContent: oa.ENCRYPTED,
            },
          },
        },
        { type: 'text', text: '4', providerData: item('msg_6820f3867c808191a4c3a8b1b3bd7ed2') },
      ],
      finish: { kind: 'stop' },
      usage: { inputTokens: 20, outputTokens: 80, cacheReadTokens: 0, reasoningTokens: 64 },
    },
  ],
  [
    'parallel function calls with streamed arguments',
    oa.parallelCalls,
    {
      blocks: [
        {
          type: 'tool-call',
          id: 'call_12345xyz',
          name: 'get_weather',
          arguments: '{"location":"Paris, France"}',
          providerData: item('fc_12345xyz'),
        },
        {
          type: 'tool-call',
          id: 'call_67890abc',
          name: 'get_weather',
          arguments: '{"location":"Bogotá, Colombia"}',
          providerData: item('fc_67890abc'),
        },
      ],
      finish: { kind: 'tool-calls' },
      usage: { inputTokens: 70, outputTokens: 40, cacheReadTokens: 0, reasoningTokens: 0 },
    },
  ],
  [
    'cached input tokens',
    oa.cached,
    {
      blocks: [{ type: 'text', text: 'Done.', providerData: item('msg_cached') }],
      finish: { kind: 'stop' },
      usage: { inputTokens: 86, outputTokens: 300, cacheReadTokens: 1920, reasoningTokens: 0 },
    },
  ],
  [
    'incomplete: max_output_tokens',
    oa.maxTokens,
    {
      blocks: [{ type: 'text', text: 'Once upon', providerData: item('msg_cut') }],
      finish: { kind: 'max-tokens' },
      usage: { inputTokens: 10, outputTokens: 16, cacheReadTokens: 0, reasoningTokens: 0 },
    },
  ],
  [
    'incomplete: content_filter',
    oa.contentFilter,
    {
      blocks: [],
      finish: {
        kind: 'error',
        failure: {
          code: 'CONTENT_FILTERED',
          providerCode: 'content_filter',
          message: `${O} stopped the output (content_filter)`,
        },
      },
      usage: { inputTokens: 10, outputTokens: 0, cacheReadTokens: 0, reasoningTokens: 0 },
    },
  ],
  [
    '429 rate limit with retry-after-ms',
    oa.rateLimited429,
    err(
      'RATE_LIMIT',
      { status: 429, retryAfterMs: 1500, requestId: 'req_oai_429', providerCode: 'rate_limit_exceeded' },
      `${O} answered with HTTP 429 rate_limit_exceeded: Rate limit reached for o4-mini in organization org-123 on tokens per min.`,
    ),
  ],
  [
    '429 insufficient_quota is QUOTA_EXCEEDED (not retried)',
    oa.quota429,
    err(
      'QUOTA_EXCEEDED',
      { status: 429, providerCode: 'insufficient_quota' },
      `${O} answered with HTTP 429 insufficient_quota: You exceeded your current quota, please check your plan and billing details.`,
    ),
  ],
  [
    '401 invalid_api_key',
    oa.unauthorized401,
    err(
      'AUTH',
      { status: 401, requestId: 'req_oai_401', providerCode: 'invalid_api_key' },
      `${O} answered with HTTP 401 invalid_api_key: Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.`,
    ),
  ],
])

const M = 'mistral.chat model mistral-large-latest'
suite('Mistral through @ai-sdk/mistral', mistral, [
  [
    'text',
    ms.text,
    {
      blocks: [{ type: 'text', text: 'Bonjour !' }],
      finish: { kind: 'stop' },
      usage: { inputTokens: 10, outputTokens: 4 },
    },
  ],
  [
    'parallel tool calls',
    ms.parallelCalls,
    {
      blocks: [
        {
          type: 'tool-call',
          id: 'D681PevKs',
          name: 'retrieve_payment_status',
          arguments: '{"transaction_id": "T1001"}',
        },
        {
          type: 'tool-call',
          id: 'Qm3nB7xZp',
          name: 'retrieve_payment_date',
          arguments: '{"transaction_id": "T1001"}',
        },
      ],
      finish: { kind: 'tool-calls' },
      usage: { inputTokens: 160, outputTokens: 44 },
    },
  ],
  [
    'length',
    ms.maxTokens,
    {
      blocks: [{ type: 'text', text: 'The history of' }],
      finish: { kind: 'max-tokens' },
      usage: { inputTokens: 8, outputTokens: 4 },
    },
  ],
  [
    '401 with an empty SDK message falls back to the body',
    ms.unauthorized401,
    err(
      'AUTH',
      { status: 401, requestId: 'f1f0b7f4c9f5b0a2a6d7e1c4e7c0d2a1' },
      `${M} answered with HTTP 401: Unauthorized`,
    ),
  ],
  [
    '429',
    ms.rateLimited429,
    err(
      'RATE_LIMIT',
      { status: 429, retryAfterMs: 2000, providerCode: '1300' },
      `${M} answered with HTTP 429 1300: Requests rate limit exceeded`,
    ),
  ],
])

const B = 'amazon-bedrock model us.anthropic.claude-sonnet-4-5-20250929-v1:0'
const bedrockUsage = (input: number, output: number, read = 0, write = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: read,
  cacheWriteTokens: write,
})
suite('Amazon Bedrock (ConverseStream event stream) through @ai-sdk/amazon-bedrock', bedrock, [
  [
    'text',
    bd.text,
    {
      blocks: [{ type: 'text', text: 'Hello from Bedrock.' }],
      finish: { kind: 'stop' },
      usage: bedrockUsage(12, 6),
    },
  ],
  [
    'reasoning with signature, redacted reasoning, text',
    bd.reasoning,
    {
      blocks: [
        {
          type: 'reasoning',
          text: 'Two plus two is four.',
          providerData: { bedrock: { signature: bd.BEDROCK_SIGNATURE } },
        },
        { type: 'reasoning', text: '', providerData: { bedrock: { redactedContent: bd.BEDROCK_REDACTED } } },
        { type: 'text', text: '4' },
      ],
      finish: { kind: 'stop' },
      usage: bedrockUsage(40, 30),
    },
  ],
  [
    'parallel tool calls with streamed input',
    bd.parallelTools,
    {
      blocks: [
        {
          type: 'tool-call',
          id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
          name: 'top_song',
          arguments: '{"sign": "WZPZ"}',
        },
        {
          type: 'tool-call',
          id: 'tooluse_p8tGd1JjQo2cY2vE8tJ1Aw',
          name: 'top_song',
          arguments: '{"sign": "WKRP"}',
        },
      ],
      finish: { kind: 'tool-calls' },
      usage: bedrockUsage(375, 60),
    },
  ],
  [
    'cache read and write tokens',
    bd.cacheUsage,
    {
      blocks: [{ type: 'text', text: 'Cached.' }],
      finish: { kind: 'stop' },
      usage: bedrockUsage(14, 3, 3200, 400),
    },
  ],
  [
    'max_tokens',
    bd.maxTokens,
    {
      blocks: [{ type: 'text', text: 'A long' }],
      finish: { kind: 'max-tokens' },
      usage: bedrockUsage(10, 2),
    },
  ],
  [
    'guardrail_intervened',
    bd.guardrail,
    {
      blocks: [{ type: 'text', text: 'Sorry, the model cannot answer this question.' }],
      finish: {
        kind: 'error',
        failure: {
          code: 'CONTENT_FILTERED',
          providerCode: 'guardrail_intervened',
          message: `${B} stopped the output (guardrail_intervened)`,
        },
      },
      usage: bedrockUsage(10, 9),
    },
  ],
  [
    '429 ThrottlingException',
    bd.throttled429,
    err(
      'RATE_LIMIT',
      { status: 429, requestId: 'bedrock-req-429', providerCode: 'ThrottlingException' },
      `${B} answered with HTTP 429 ThrottlingException: Too many requests, please wait before trying again.`,
    ),
  ],
  [
    '403 AccessDeniedException',
    bd.denied403,
    err(
      'AUTH',
      { status: 403, providerCode: 'AccessDeniedException' },
      `${B} answered with HTTP 403 AccessDeniedException: You don't have access to the model with the specified model ID.`,
    ),
  ],
  [
    '400 ValidationException',
    bd.validation400,
    err(
      'INVALID_REQUEST',
      { status: 400, providerCode: 'ValidationException' },
      `${B} answered with HTTP 400 ValidationException: The model returned the following errors: messages.1.content.0.type: Expected \`thinking\` or \`redacted_thinking\``,
    ),
  ],
])
