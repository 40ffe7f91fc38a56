/**
 * Opt-in live check against a real OpenAI-compatible endpoint. Runs only when DSH_LIVE_BASE_URL and
 * DSH_LIVE_API_KEY are set (model: DSH_LIVE_MODEL, default deepseek-chat). Reasoning replay follows
 * DSH_LIVE_REASONING_REPLAY, else `reasoning_content` for api.deepseek.com and `omit` elsewhere.
 */
import {
  type ContentBlock,
  createAssistantMessage,
  createToolResultMessage,
  type LlmRequest,
  type StreamChunk,
  userText,
} from 'dsh-llm'
import { openAiCompatible, type ReasoningReplay } from 'dsh-llm-openai'
import { describe, expect, it } from 'vitest'
import { collect } from './helpers.ts'

const baseURL = process.env.DSH_LIVE_BASE_URL ?? ''
const apiKey = process.env.DSH_LIVE_API_KEY ?? ''
const model = process.env.DSH_LIVE_MODEL ?? 'deepseek-chat'
const replay: ReasoningReplay =
  process.env.DSH_LIVE_REASONING_REPLAY === 'omit' ||
  process.env.DSH_LIVE_REASONING_REPLAY === 'reasoning_content'
    ? process.env.DSH_LIVE_REASONING_REPLAY
    : baseURL.includes('api.deepseek.com')
      ? 'reasoning_content'
      : 'omit'

function completedBlocks(chunks: readonly StreamChunk[]): ContentBlock[] {
  const blocks: ContentBlock[] = []
  for (const chunk of chunks) if (chunk.type === 'block-end') blocks.push(chunk.block)
  return blocks
}

function grammar(chunks: readonly StreamChunk[]): void {
  expect(chunks.at(-1)?.type).toBe('finish')
  expect(chunks.filter((chunk) => chunk.type === 'finish')).toHaveLength(1)
  expect(chunks.filter((chunk) => chunk.type === 'usage').length).toBeLessThanOrEqual(1)
}

describe.runIf(baseURL !== '' && apiKey !== '')(`live two-step tool turn (${model})`, () => {
  it('calls the add tool, then answers with its result', { timeout: 120_000 }, async () => {
    const adapter = openAiCompatible({ baseURL, apiKey, reasoningReplay: replay, timeoutMs: 60_000 })
    const first: LlmRequest = {
      provider: 'live',
      model,
      system: 'You are a calculator. Always use the add tool for additions; never add in your head.',
      messages: [userText('What is 17 + 25?')],
      tools: [
        {
          name: 'add',
          description: 'Adds two integers and returns the sum.',
          parameters: {
            type: 'object',
            properties: { a: { type: 'integer' }, b: { type: 'integer' } },
            required: ['a', 'b'],
          },
        },
      ],
    }
    const step1 = await collect(adapter.stream(first))
    grammar(step1)
    expect(step1.at(-1)).toEqual({ type: 'finish', reason: { kind: 'tool-calls' } })
    const blocks1 = completedBlocks(step1)
    const call = blocks1.find((block) => block.type === 'tool-call')
    if (call?.type !== 'tool-call') throw new Error(`no tool call in step 1: ${JSON.stringify(step1)}`)
    expect(call.name).toBe('add')
    const args = JSON.parse(call.arguments) as { a: number; b: number }
    expect(args.a + args.b).toBe(42)

    const second: LlmRequest = {
      ...first,
      messages: [
        ...first.messages,
        createAssistantMessage({ content: blocks1, source: { kind: 'model', provider: 'live', model } }),
        createToolResultMessage({ callId: call.id, content: [{ type: 'text', text: '42' }] }),
      ],
    }
    const step2 = await collect(adapter.stream(second))
    grammar(step2)
    expect(step2.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    const answer = completedBlocks(step2)
      .map((block) => (block.type === 'text' ? block.text : ''))
      .join('')
    expect(answer).toContain('42')
  })
})
