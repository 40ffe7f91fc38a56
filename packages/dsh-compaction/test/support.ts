/**
 * Shared scaffolding for the dsh-compaction tests: a model that counts every request against a
 * context window (and reports that count as its usage), a reading tool with large results, and an
 * app with the loop, the invariants and the plugin mounted.
 */
import type { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import Compaction, { type CompactionConfig } from 'dsh-compaction'
import { createCheckedApp } from 'dsh-invariants/vitest'
import { type LlmAdapter, LlmErrorCode, type LlmRequest, type StreamChunk, type Usage } from 'dsh-llm'
import { errorResponse, textResponse, toolCallResponse } from 'dsh-llm/testing'
import type { SessionsConfig } from 'dsh-session'
import { z } from 'zod'

/**
 * The model's own count of a request: its JSON text at 3.6 characters a token — deliberately not
 * the plugin's `characters / 4`, so the plugin must lean on reported usage, not on agreeing with it.
 */
export function modelTokens(request: LlmRequest): number {
  const text = JSON.stringify({ system: request.system, tools: request.tools, messages: request.messages })
  return Math.ceil(text.length / 3.6)
}

/** True for the summarizing request dsh-compaction sends (its instruction is the last message). */
export function isSummaryRequest(request: LlmRequest): boolean {
  const last = request.messages[request.messages.length - 1]
  return last?.id.endsWith(':instruction') === true
}

/** What the window model saw. */
export interface WindowModelLog {
  /** Every request, with the model's token count. */
  readonly requests: { readonly request: LlmRequest; readonly tokens: number; readonly summary: boolean }[]
  /** Requests over the window (answered with CONTEXT_WINDOW_EXCEEDED). */
  overflows: number
}

/** Answers one loop request (`n` counts loop requests from 0). */
export type Behaviour = (request: LlmRequest, n: number) => StreamChunk[]

/**
 * A model with a `window`-token context: a request over it gets `CONTEXT_WINDOW_EXCEEDED`; a
 * summarizing request gets `summary`; any other request gets `behaviour`. Every answer reports the
 * model's count as `inputTokens`.
 */
export function windowModel(
  window: number,
  behaviour: Behaviour,
  summary: (request: LlmRequest) => string = () => 'The user asked to read files; they were read.',
): { adapter: LlmAdapter; log: WindowModelLog } {
  const log: WindowModelLog = { requests: [], overflows: 0 }
  let n = 0
  const adapter: LlmAdapter = {
    async *stream(request) {
      const tokens = modelTokens(request)
      const summarizing = isSummaryRequest(request)
      log.requests.push({ request, tokens, summary: summarizing })
      if (tokens > window) {
        log.overflows++
        yield* errorResponse(
          LlmErrorCode.CONTEXT_WINDOW_EXCEEDED,
          `request of ${tokens} tokens exceeds the ${window}-token window`,
        )
        return
      }
      const usage: Usage = { inputTokens: tokens, outputTokens: 20 }
      if (summarizing) {
        yield* withUsage(textResponse(summary(request)), usage)
        return
      }
      yield* withUsage(behaviour(request, n++), usage)
    },
  }
  return { adapter, log }
}

function withUsage(chunks: StreamChunk[], usage: Usage): StreamChunk[] {
  return chunks.map((chunk) => (chunk.type === 'usage' ? { type: 'usage', usage } : chunk))
}

/** Reads `file-<n>` with `read`, `steps` times, then answers `done`. */
export function readingBehaviour(steps: number): Behaviour {
  return (_request, n) =>
    n < steps ? toolCallResponse(`call-${n}`, 'read', { path: `file-${n}` }) : textResponse('done')
}

/** A text of `chars` characters that names `path` (so each result differs). */
export function fileText(path: string, chars: number): string {
  const line = `${path}: the quick brown fox jumps over the lazy dog 0123456789\n`
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars)
}

/** An app with the loop, a `read` tool returning `resultChars(path)` characters, the invariants and `Compaction`. */
export async function compactingApp(
  options: {
    /** Characters of the result for `path`; default 6000 for every path. */
    readonly resultChars?: (path: string) => number
    readonly compaction?: CompactionConfig
    readonly sessions?: SessionsConfig
  } = {},
): Promise<Context> {
  const app = await createCheckedApp(options.sessions === undefined ? {} : { sessions: options.sessions })
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  await app.plugin(Compaction, options.compaction ?? {})
  const chars = options.resultChars ?? (() => 6000)
  app.tools.register({
    name: 'read',
    description: 'Reads a file.',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => fileText(path, chars(path)),
  })
  return app
}
