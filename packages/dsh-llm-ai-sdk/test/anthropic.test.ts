import { describe, expect, it } from 'vitest'
import * as fx from './fixtures/anthropic.ts'
import { assemble, claude, outline, play, prompt, run } from './helpers.ts'

describe('Anthropic through @ai-sdk/anthropic', () => {
  it('text: exact chunks, usage and finish', async () => {
    const { adapter } = play([fx.text], claude)
    const chunks = await run(adapter, prompt())
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'text-delta', index: 0, text: '!' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Hello!' } },
      {
        type: 'usage',
        usage: { inputTokens: 25, outputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
  })

  it('thinking: the signature rides on the reasoning block', async () => {
    const { adapter } = play([fx.thinking], claude)
    const { blocks, finish } = assemble(await run(adapter, prompt()))
    expect(blocks).toEqual([
      {
        type: 'reasoning',
        text: 'Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3',
        providerData: { anthropic: { signature: fx.SIGNATURES.plan } },
      },
      { type: 'text', text: '27 * 453 = 12,231' },
    ])
    expect(finish).toEqual({ kind: 'stop' })
  })

  it('redacted thinking: a reasoning block with empty text and the opaque data', async () => {
    const { adapter } = play([fx.redacted], claude)
    const { blocks } = assemble(await run(adapter, prompt()))
    expect(blocks).toEqual([
      { type: 'reasoning', text: '', providerData: { anthropic: { redactedData: fx.SIGNATURES.redacted } } },
      { type: 'text', text: 'I can help with that.' },
    ])
  })

  it('parallel tool calls: input streams as deltas, each call ends whole', async () => {
    const { adapter } = play([fx.parallelTools], claude)
    const chunks = await run(adapter, prompt())
    const deltas = chunks.filter((chunk) => chunk.type === 'tool-call-delta')
    expect(deltas).toEqual([
      {
        type: 'tool-call-delta',
        index: 1,
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        argumentsDelta: '',
      },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"location":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: ' "San Fra' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'ncisco, CA"}' },
      {
        type: 'tool-call-delta',
        index: 2,
        id: 'toolu_01HkGzmRk2WsxPZ8VsF4ThBN',
        name: 'get_time',
        argumentsDelta: '',
      },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"timezone"' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: ': "America/Los_Angeles"}' },
    ])
    const { blocks, finish, usage } = assemble(chunks)
    expect(outline(blocks)).toEqual([
      "text:Okay, let's check the weather for San Francisco, CA:",
      'tool-call:get_weather{"location": "San Francisco, CA"}',
      'tool-call:get_time{"timezone": "America/Los_Angeles"}',
    ])
    expect(finish).toEqual({ kind: 'tool-calls' })
    expect(usage).toEqual({ inputTokens: 472, outputTokens: 89, cacheReadTokens: 0, cacheWriteTokens: 0 })
  })

  it('cache usage: writes, then reads, as disjoint counts', async () => {
    const { adapter } = play([fx.cacheWrite, fx.cacheRead], claude)
    expect(assemble(await run(adapter, prompt())).usage).toEqual({
      inputTokens: 21,
      outputTokens: 393,
      cacheReadTokens: 0,
      cacheWriteTokens: 188086,
    })
    expect(assemble(await run(adapter, prompt())).usage).toEqual({
      inputTokens: 21,
      outputTokens: 120,
      cacheReadTokens: 188086,
      cacheWriteTokens: 0,
    })
  })

  it('max tokens: finish max-tokens and the cut tool call is not committed', async () => {
    const { adapter } = play([fx.maxTokens], claude)
    const { blocks, finish } = assemble(await run(adapter, prompt()))
    expect(finish).toEqual({ kind: 'max-tokens' })
    expect(outline(blocks)).toEqual(['text:Let me write the file'])
  })

  it('refusal: an error finish CONTENT_FILTERED with the raw reason kept', async () => {
    const { adapter } = play([fx.refusal], claude)
    const { finish } = assemble(await run(adapter, prompt()))
    expect(finish).toEqual({
      kind: 'error',
      failure: {
        code: 'CONTENT_FILTERED',
        message: 'anthropic.messages model claude-sonnet-4-5 stopped the output (refusal)',
        providerCode: 'refusal',
      },
    })
  })

  it('a mid-stream overloaded error ends the stream with a retryable SERVER failure', async () => {
    const { adapter } = play([fx.midStreamOverloaded], claude)
    const chunks = await run(adapter, prompt())
    expect(chunks.at(-1)).toEqual({
      type: 'finish',
      reason: {
        kind: 'error',
        failure: {
          code: 'SERVER',
          message:
            'anthropic.messages model claude-sonnet-4-5 failed mid-stream overloaded_error: Overloaded',
          requestId: 'req_011CQmid',
          providerCode: 'overloaded_error',
        },
      },
    })
  })

  const errors = [
    [
      '529 overloaded',
      fx.overloaded529,
      { code: 'SERVER', status: 529, providerCode: 'overloaded_error', requestId: 'req_011CQ529' },
    ],
    [
      '429 rate limited',
      fx.rateLimited429,
      {
        code: 'RATE_LIMIT',
        status: 429,
        providerCode: 'rate_limit_error',
        requestId: 'req_011CQ429',
        retryAfterMs: 17000,
      },
    ],
    [
      '401 unauthorized',
      fx.unauthorized401,
      { code: 'AUTH', status: 401, providerCode: 'authentication_error', requestId: 'req_011CQ401' },
    ],
    [
      '400 bad signature',
      fx.badSignature400,
      {
        code: 'INVALID_REQUEST',
        status: 400,
        providerCode: 'invalid_request_error',
        requestId: 'req_011CQ400',
      },
    ],
    [
      '400 prompt too long',
      fx.tooLong400,
      { code: 'CONTEXT_WINDOW_EXCEEDED', status: 400, providerCode: 'invalid_request_error' },
    ],
  ] as const
  for (const [name, fixture, expected] of errors) {
    it(`HTTP ${name}: one error finish with code, status, provider code and request id`, async () => {
      const { adapter } = play([fixture], claude)
      const chunks = await run(adapter, prompt())
      expect(chunks).toHaveLength(1)
      const finish = chunks[0]
      if (finish?.type !== 'finish' || finish.reason.kind !== 'error')
        throw new Error('expected an error finish')
      const { message, ...rest } = finish.reason.failure
      expect(rest).toEqual(expected)
      expect(message).toMatch(/^anthropic\.messages model claude-sonnet-4-5 answered with HTTP \d{3} /)
    })
  }

  it('retry classification: 529 and 429 are retried by the default policy, 401 and 400 are not', async () => {
    const { resolveRetryPolicy } = await import('dsh-llm')
    const policy = resolveRetryPolicy()
    const codeOf = async (fixture: (typeof errors)[number][1]) => {
      const { adapter } = play([fixture], claude)
      const [finish] = await run(adapter, prompt())
      if (finish?.type !== 'finish' || finish.reason.kind !== 'error')
        throw new Error('expected an error finish')
      return policy.delayFor(finish.reason.failure, 1)
    }
    expect(await codeOf(fx.overloaded529)).toBe(500)
    expect(await codeOf(fx.rateLimited429)).toBe(17000)
    expect(await codeOf(fx.unauthorized401)).toBeUndefined()
    expect(await codeOf(fx.badSignature400)).toBeUndefined()
  })
})
