/** Small helpers shared by the adapter tests. */
import { type LlmAdapter, type LlmRequest, type StreamChunk, userText } from 'dsh-llm'

/** Drains a stream into an array. */
export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/** Runs one request through `adapter` and returns every chunk. */
export function run(adapter: LlmAdapter, request: LlmRequest): Promise<StreamChunk[]> {
  return collect(adapter.stream(request))
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
