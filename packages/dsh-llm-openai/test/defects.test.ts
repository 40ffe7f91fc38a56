/** Regression tests for the ways replayed provider responses used to lose output or misreport. */
import type { StreamChunk } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chunk, prompt, run, sseBody, usageChunk } from './helpers.ts'
import { type FixtureServer, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

function adapter() {
  return openAiCompatible({ baseURL: server.baseURL, apiKey: 'sk-test', onWarning: () => undefined })
}

const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }

describe('regressions from replayed provider streams', () => {
  it('finish_reason "" on every chunk is "not yet": the output is not cut after the first delta', async () => {
    server.reply(
      sseReply(
        sseBody([chunk({ content: 'Hel' }, ''), chunk({ content: 'lo' }, ''), chunk({}, 'stop', { usage })]),
      ),
    )
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hel' },
      { type: 'text-delta', index: 0, text: 'lo' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Hello' } },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 5 } },
      { type: 'finish', reason: { kind: 'stop' } },
    ] satisfies StreamChunk[])
  })

  it('a refusal becomes a text block and a refusal finish the app can see', async () => {
    server.reply(
      sseReply(
        sseBody([
          chunk({ role: 'assistant', content: null, refusal: '' }),
          chunk({ refusal: "I'm sorry, " }),
          chunk({ refusal: "I can't help with that." }),
          chunk({}, 'stop'),
        ]),
      ),
    )
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: "I'm sorry, " },
      { type: 'text-delta', index: 0, text: "I can't help with that." },
      { type: 'block-end', index: 0, block: { type: 'text', text: "I'm sorry, I can't help with that." } },
      { type: 'finish', reason: { kind: 'refusal', refusal: "I'm sorry, I can't help with that." } },
    ] satisfies StreamChunk[])
  })

  it('content sent as an array of text parts is joined, not ignored', async () => {
    server.reply(
      sseReply(
        sseBody([
          chunk({ content: [{ type: 'text', text: 'Bon' }] }),
          chunk({
            content: [
              { type: 'text', text: 'jour' },
              { type: 'text', text: '!' },
            ],
          }),
          chunk({}, 'stop'),
        ]),
      ),
    )
    expect(await run(adapter(), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Bon' },
      { type: 'text-delta', index: 0, text: 'jour' },
      { type: 'text-delta', index: 0, text: '!' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Bonjour!' } },
      { type: 'finish', reason: { kind: 'stop' } },
    ] satisfies StreamChunk[])
  })

  it('an unknown finish reason ends as an error keeping the provider reason, not a plain stop', async () => {
    server.reply(
      sseReply(sseBody([chunk({ content: 'x' }), chunk({}, 'MALFORMED_FUNCTION_CALL', { usage })])),
    )
    const chunks = await run(adapter(), prompt('hi', { model: 'gemini-2.5-flash' }))
    expect(chunks.at(-1)).toEqual({
      type: 'finish',
      reason: {
        kind: 'error',
        failure: {
          code: 'UNKNOWN_FINISH_REASON',
          providerCode: 'MALFORMED_FUNCTION_CALL',
          message: `${server.baseURL} (model gemini-2.5-flash) ended the output with finish_reason "MALFORMED_FUNCTION_CALL", which this adapter does not know`,
          requestId: 'req-fixture',
        },
      },
    })
    expect(chunks.at(-2)).toEqual({ type: 'usage', usage: { inputTokens: 12, outputTokens: 5 } })
  })

  it('a 429 meaning "out of quota" is QUOTA_EXCEEDED, not a retryable RATE_LIMIT', async () => {
    server.reply({
      status: 429,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-quota' },
      writes: [
        JSON.stringify({
          error: {
            message: 'You exceeded your current quota, please check your plan and billing details.',
            type: 'insufficient_quota',
            param: null,
            code: 'insufficient_quota',
          },
        }),
      ],
    })
    const chunks = await run(adapter(), prompt())
    expect(chunks).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'QUOTA_EXCEEDED',
            providerCode: 'insufficient_quota',
            status: 429,
            requestId: 'req-quota',
            message: `${server.baseURL} (model test-model): HTTP 429 insufficient_quota: You exceeded your current quota, please check your plan and billing details. [request req-quota]`,
          },
        },
      },
    ] satisfies StreamChunk[])
  })

  it('usage is kept when the response ends in a content filter', async () => {
    server.reply(
      sseReply(sseBody([chunk({ content: 'Once upon' }), chunk({}, 'content_filter'), usageChunk(usage)])),
    )
    const chunks = await run(adapter(), prompt())
    expect(chunks.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 5 } },
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'CONTENT_FILTERED',
            providerCode: 'content_filter',
            message: `${server.baseURL} (model test-model) stopped the output (finish_reason content_filter)`,
            requestId: 'req-fixture',
          },
        },
      },
    ] satisfies StreamChunk[])
  })

  it('usage already reported is kept when the stream then breaks off before its finish', async () => {
    server.reply(sseReply(sseBody([chunk({ content: 'Par' }), usageChunk(usage)], false)))
    const chunks = await run(adapter(), prompt())
    expect(chunks.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 5 } },
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'TRANSPORT',
            message: `${server.baseURL} (model test-model): the stream ended after 2 SSE events with neither a finish_reason nor [DONE]; the answer is incomplete`,
            requestId: 'req-fixture',
          },
        },
      },
    ] satisfies StreamChunk[])
  })
})
