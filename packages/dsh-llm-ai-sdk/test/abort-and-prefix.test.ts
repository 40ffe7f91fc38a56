/** Abort ends in `aborted`; the cache policy's session prefix gets its own breakpoint. */
import { createAnthropic } from '@ai-sdk/anthropic'
import { createUserMessage, type LlmRequest, userText } from 'dsh-llm'
import { describe, expect, it } from 'vitest'
import { fromAiSdk } from '../src/index.ts'
import * as fx from './fixtures/anthropic.ts'
import { claude, play, run } from './helpers.ts'
import { bodyOf } from './recorded.ts'

describe('abort', () => {
  it('a signal that fires mid-stream ends the stream with one aborted finish', async () => {
    const whole = new TextDecoder().decode(bodyOf(fx.text))
    const firstEvents = `${whole.split('event: content_block_delta')[0]}`
    const controller = new AbortController()
    // The body sends the first events, then waits until the request's signal fires and fails like a cut socket.
    const fetch: typeof globalThis.fetch = async (_url, init) => {
      const signal = init?.signal
      const body = new ReadableStream<Uint8Array>({
        start(stream) {
          stream.enqueue(new TextEncoder().encode(firstEvents))
          signal?.addEventListener('abort', () => stream.error(signal.reason))
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    }
    const adapter = fromAiSdk(createAnthropic({ apiKey: 'k', fetch }).languageModel('claude-sonnet-4-5'))
    const chunks = []
    for await (const chunk of adapter.stream({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      messages: [userText('hi')],
      signal: controller.signal,
    })) {
      chunks.push(chunk)
      if (chunk.type === 'block-start') controller.abort(new Error('user pressed stop'))
    }
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      {
        type: 'finish',
        reason: {
          kind: 'aborted',
          failure: {
            code: 'ABORTED',
            message:
              'request to anthropic.messages model claude-sonnet-4-5 aborted: Error: user pressed stop',
          },
        },
      },
    ])
  })

  it('a signal aborted before the call makes no request', async () => {
    const { adapter, recorded } = play([fx.text], claude)
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    const chunks = await run(adapter, {
      provider: 'anthropic',
      model: 'm',
      messages: [userText('hi')],
      signal: controller.signal,
    })
    expect(chunks.map((chunk) => (chunk.type === 'finish' ? chunk.reason.kind : chunk.type))).toEqual([
      'aborted',
    ])
    expect(recorded.requests).toHaveLength(0)
  })
})

describe('the session prefix breakpoint', () => {
  it('marks the last prefix message, the system prompt and the last message; at most four in all', async () => {
    const { adapter, recorded } = play([fx.text], claude)
    const prefix = [
      createUserMessage({
        content: [{ type: 'text', text: 'Project rules: be brief.' }],
        source: { kind: 'plugin', plugin: 'rules' },
      }),
      createUserMessage({
        content: [{ type: 'text', text: 'Repository map: src/, test/.' }],
        source: { kind: 'plugin', plugin: 'map' },
      }),
    ]
    const request: LlmRequest = {
      provider: 'anthropic',
      model: 'm',
      system: 'You are a coding agent.',
      messages: [...prefix, userText('Fix the bug.')],
      cachePolicy: { breakpoints: 'auto', ttl: '1h', prefixMessages: 2 },
    }
    await run(adapter, request)
    const body = JSON.parse(recorded.requests[0]?.body ?? '{}') as {
      system: { cache_control?: unknown }[]
      messages: { content: { text: string; cache_control?: unknown }[] }[]
    }
    const marker = { type: 'ephemeral', ttl: '1h' }
    expect(body.system.at(-1)?.cache_control).toEqual(marker)
    // The three user messages are one Anthropic user turn: the markers sit on the blocks they ended.
    expect(
      body.messages.flatMap((message) =>
        message.content.map((part) => [part.text, part.cache_control ?? null]),
      ),
    ).toEqual([
      ['Project rules: be brief.', null],
      ['Repository map: src/, test/.', marker],
      ['Fix the bug.', marker],
    ])
  })
})
