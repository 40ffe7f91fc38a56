/**
 * The summarizing call: the session's own request (system, tools, session prefix, history, exactly
 * as the loop sends them, so the provider's prompt cache is read) with one instruction appended, and
 * the reading of its answer.
 */
import {
  BlockAssembler,
  createUserMessage,
  type LlmCallConfig,
  type LlmRequest,
  type Message,
  type SessionId,
  type StreamChunk,
  type UserMessage,
} from 'dsh-llm'
import { composeRequest, type RequestHeader } from 'dsh-session'

/** The source of the messages dsh-compaction writes. */
export const COMPACTION_SOURCE = Object.freeze({ kind: 'plugin', plugin: 'dsh-compaction' } as const)

/** The default summarizing instruction (`{summarized}` and `{kept}` are message counts). */
export const DEFAULT_SUMMARY_INSTRUCTION = [
  'Context compaction: the conversation above is about to be shortened.',
  'Its first {summarized} messages will be replaced by the summary you write now; the last {kept} messages stay as they are, after your summary.',
  'Write the summary for yourself, to continue the work without the replaced messages: the task and the user’s requests, decisions taken and why, what the tools returned that still matters (paths, names, numbers, errors), what is done and what remains.',
  'Answer with the summary text only. Do not call tools.',
].join('\n')

/** The heading the summary message starts with. */
export const SUMMARY_HEADING =
  'Summary of the earlier conversation (the messages it stands for were compacted):'

/** The instruction message for a summary of `summarized` messages that keeps `kept` after it. */
export function summaryInstruction(
  template: string,
  summarized: number,
  kept: number,
  id: string,
): UserMessage {
  const text = template.replaceAll('{summarized}', String(summarized)).replaceAll('{kept}', String(kept))
  return createUserMessage({ id, content: [{ type: 'text', text }], source: COMPACTION_SOURCE })
}

/** The summary message that replaces the summarized range. */
export function summaryMessage(text: string, id: string): UserMessage {
  return createUserMessage({
    id,
    content: [{ type: 'text', text: `${SUMMARY_HEADING}\n\n${text}` }],
    source: COMPACTION_SOURCE,
  })
}

/**
 * The summarizing request: `composeRequest` over `header` (its config with `maxTokens` and, when
 * given, `provider`/`model` replaced) and `[...history, instruction]`. With an unchanged config its
 * system, tools and messages up to the history's end equal the loop request for that history.
 */
export function summaryRequest(
  header: RequestHeader,
  history: readonly Message[],
  instruction: UserMessage,
  overrides: { readonly maxTokens: number; readonly provider?: string; readonly model?: string },
  extras: { readonly sessionId?: SessionId; readonly signal?: AbortSignal },
): LlmRequest {
  const config: LlmCallConfig = {
    ...header.config,
    ...(overrides.provider === undefined ? {} : { provider: overrides.provider }),
    ...(overrides.model === undefined ? {} : { model: overrides.model }),
    maxTokens: Math.min(header.config.maxTokens ?? overrides.maxTokens, overrides.maxTokens),
  }
  return composeRequest({ ...header, config }, [...history, instruction], extras)
}

/** Closed: what a summarizing call produced. */
export type SummaryAnswer =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'failed'; readonly reason: string }

/**
 * Reads a summarizing stream to its end: the text blocks joined, or why it failed (a provider
 * failure, a thrown stream, truncation at `max-tokens`, or no text). Never throws.
 */
export async function readSummary(stream: () => AsyncIterable<StreamChunk>): Promise<SummaryAnswer> {
  const assembler = new BlockAssembler()
  try {
    for await (const chunk of stream()) assembler.push(chunk)
  } catch (error) {
    return {
      kind: 'failed',
      reason: `the summarizing call threw: ${error instanceof Error ? error.message : String(error)}`,
    }
  }
  const finish = assembler.finishReason()
  if (finish.kind === 'error' || finish.kind === 'aborted') {
    return {
      kind: 'failed',
      reason: `the summarizing call failed: ${finish.failure.code}: ${finish.failure.message}`,
    }
  }
  if (finish.kind === 'max-tokens') {
    return { kind: 'failed', reason: 'the summary was cut off at the token limit' }
  }
  const parts: string[] = []
  for (const block of assembler.blocks()) if (block.type === 'text') parts.push(block.text)
  const text = parts.join('\n').trim()
  if (text === '') return { kind: 'failed', reason: 'the summarizing call returned no text' }
  return { kind: 'text', text }
}
