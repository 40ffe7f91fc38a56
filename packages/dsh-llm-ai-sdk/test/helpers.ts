/** Shared helpers of the adapter tests: run a request through a checked app, assemble, summarize. */
import { createAnthropic } from '@ai-sdk/anthropic'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { createCheckedApp } from 'dsh-invariants/vitest'
import {
  BlockAssembler,
  type ContentBlock,
  type LlmAdapter,
  type LlmRequest,
  type StreamChunk,
  userText,
} from 'dsh-llm'
import { fromAiSdk } from '../src/index.ts'
import type { AiSdkNotice } from '../src/types.ts'
import { type Recorded, type RecordedFetch, recordedFetch } from './recorded.ts'

/** Drains a stream. */
export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/**
 * Runs `request` through `adapter` inside a checked app (every invariant mounted: the stream
 * grammar checks each chunk the adapter yields) and returns the chunks.
 */
export async function run(adapter: LlmAdapter, request: LlmRequest): Promise<StreamChunk[]> {
  const app = await createCheckedApp()
  app.llm.registerAdapter(request.provider, adapter)
  return collect(app.llm.stream(request))
}

/** The blocks, finish and usage the chunks assemble to. */
export function assemble(chunks: readonly StreamChunk[]) {
  const assembler = new BlockAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return { blocks: assembler.blocks(), finish: assembler.finishReason(), usage: assembler.usage() }
}

/** A one-prompt request. */
export function prompt(text = 'hi', extra: Partial<LlmRequest> = {}): LlmRequest {
  return { provider: 'ai-sdk', model: 'test', messages: [userText(text)], ...extra }
}

/** A model of `factory` over a recorded fetch, the adapter around it, and what it saw. */
export interface Played {
  readonly adapter: LlmAdapter
  readonly recorded: RecordedFetch
  readonly notices: AiSdkNotice[]
}

/** Wraps `model(fetch)` with `fromAiSdk`, answering from `script`. */
export function play(
  script: readonly Recorded[],
  model: (fetch: typeof globalThis.fetch) => LanguageModelV3,
): Played {
  const recorded = recordedFetch(script)
  const notices: AiSdkNotice[] = []
  const adapter = fromAiSdk(model(recorded.fetch), { onNotice: (notice) => notices.push(notice) })
  return { adapter, recorded, notices }
}

/** A Claude model of `@ai-sdk/anthropic` over `fetch`. */
export function claude(fetch: typeof globalThis.fetch): LanguageModelV3 {
  return createAnthropic({ apiKey: 'sk-ant-test', fetch }).languageModel('claude-sonnet-4-5')
}

/** A short text per block, for order assertions: `text:…`, `reasoning:…`, `tool-call:name(args)`. */
export function outline(blocks: readonly ContentBlock[]): string[] {
  return blocks.map((block) => {
    switch (block.type) {
      case 'text':
      case 'reasoning':
        return `${block.type}:${block.text}`
      case 'tool-call':
        return `tool-call:${block.name}${block.arguments}`
      default:
        return block.type
    }
  })
}
