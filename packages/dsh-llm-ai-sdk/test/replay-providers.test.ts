/**
 * Replay metadata of Gemini, Bedrock and OpenAI Responses goes back on the next request as the
 * provider package serializes it: the block of step 1 (from a recorded response) is in the history
 * of step 2, and step 2's body carries its data verbatim.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { createAssistantMessage, createToolResultMessage, type LlmRequest, userText } from 'dsh-llm'
import { describe, expect, it } from 'vitest'
import * as bd from './fixtures/bedrock.ts'
import * as gg from './fixtures/google.ts'
import * as oa from './fixtures/openai-responses.ts'
import { assemble, play, prompt, run } from './helpers.ts'
import { bedrock, gemini, openaiResponses } from './providers.ts'
import type { Recorded } from './recorded.ts'

/** Step 1 from `first`; step 2 (answered by `second`) carries step 1's message; returns step 2's body. */
async function secondBody(
  model: (fetch: typeof globalThis.fetch) => LanguageModelV3,
  first: Recorded,
  second: Recorded,
): Promise<string> {
  const { adapter, recorded } = play([first, second], model)
  const request = prompt('Weather in Paris?')
  const { blocks } = assemble(await run(adapter, request))
  const assistant = createAssistantMessage({
    content: blocks,
    source: { kind: 'model', provider: 'p', model: 'm' },
  })
  const results = blocks.flatMap((block) =>
    block.type === 'tool-call'
      ? [createToolResultMessage({ callId: block.id, content: [{ type: 'text', text: '18°C' }] })]
      : [],
  )
  const next: LlmRequest = {
    ...request,
    messages: [...request.messages, assistant, ...results, userText('And now?')],
  }
  await run(adapter, next)
  return recorded.requests[1]?.body ?? ''
}

describe('replay metadata on the wire of other providers', () => {
  it('Gemini: the thought signature goes back on its functionCall part', async () => {
    const body = JSON.parse(await secondBody(gemini, gg.thoughtSignature, gg.text)) as {
      contents: { role: string; parts: Record<string, unknown>[] }[]
    }
    const model = body.contents.find((content) => content.role === 'model')
    const call = model?.parts.find((part) => part.functionCall !== undefined)
    expect(call).toEqual({
      // The id is the one the AI SDK made up for the call (Gemini sends none) and keeps in the log.
      functionCall: { name: 'get_weather', args: { location: 'Paris' }, id: expect.any(String) },
      thoughtSignature: gg.THOUGHT_SIGNATURE,
    })
  })

  it('Bedrock: the reasoning signature and the redacted content go back in order', async () => {
    const body = JSON.parse(await secondBody(bedrock, bd.reasoning, bd.text)) as {
      messages: { role: string; content: Record<string, unknown>[] }[]
    }
    const assistant = body.messages.find((message) => message.role === 'assistant')
    expect(assistant?.content.slice(0, 2)).toEqual([
      {
        reasoningContent: {
          reasoningText: { text: 'Two plus two is four.', signature: bd.BEDROCK_SIGNATURE },
        },
      },
      { reasoningContent: { redactedContent: bd.BEDROCK_REDACTED } },
    ])
  })

  it('OpenAI Responses: the reasoning item goes back by its id', async () => {
    const body = await secondBody(openaiResponses, oa.reasoning, oa.text)
    expect(body).toContain('"rs_6820f383d7c08191846711c5df8233bc"')
  })
})
