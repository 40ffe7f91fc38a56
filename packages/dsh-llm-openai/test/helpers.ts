/** Small helpers shared by the adapter tests. */
import { createCheckedApp } from 'dsh-invariants/vitest'
import { type LlmAdapter, type LlmRequest, type StreamChunk, userText } from 'dsh-llm'

/** Drains a stream into an array. */
export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/**
 * Runs one request through `adapter`, wired into a checked app (`ctx.llm` with every invariant
 * mounted, so the stream grammar is checked on everything the adapter yields), and returns every
 * chunk.
 */
export async function run(adapter: LlmAdapter, request: LlmRequest): Promise<StreamChunk[]> {
  const app = await createCheckedApp()
  app.llm.registerAdapter(request.provider, adapter)
  return collect(app.llm.stream(request))
}

/** A minimal request: one user prompt. */
export function prompt(text = 'hi', extra: Partial<LlmRequest> = {}): LlmRequest {
  return { provider: 'openai', model: 'test-model', messages: [userText(text)], ...extra }
}

/** The chunk types in order, for ordering assertions. */
export function types(chunks: readonly StreamChunk[]): string[] {
  return chunks.map((chunk) => chunk.type)
}

/** A fetch that answers every call with an event stream made of exactly these byte pieces. */
export function piecesFetch(pieces: readonly Uint8Array[]): typeof fetch {
  return async () => {
    let next = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const piece = pieces[next++]
        if (piece === undefined) controller.close()
        else controller.enqueue(piece)
      },
    })
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
  }
}

/** An event-stream body: one `data:` event per payload (JSON-encoded), then `[DONE]` unless `done` is false. */
export function sseBody(payloads: readonly unknown[], done = true): Uint8Array {
  const events = payloads.map((payload) => `data: ${JSON.stringify(payload)}\n\n`)
  if (done) events.push('data: [DONE]\n\n')
  return new TextEncoder().encode(events.join(''))
}

/** A chat.completion.chunk payload with one choice 0 (`finish_reason` defaults to `null`). */
export function chunk(
  delta: Record<string, unknown>,
  finish: string | null = null,
  extra: Record<string, unknown> = {},
): unknown {
  return {
    id: 'chatcmpl-t',
    object: 'chat.completion.chunk',
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  }
}

/** A chat.completion.chunk payload with no choices, carrying only `usage` (as sent after the finish). */
export function usageChunk(usage: Record<string, unknown>): unknown {
  return { id: 'chatcmpl-t', object: 'chat.completion.chunk', choices: [], usage }
}
