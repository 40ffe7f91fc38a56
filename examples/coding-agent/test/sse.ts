/** A stand-in for an OpenAI-compatible server: a `fetch` that answers with scripted SSE streams. */

/** One recorded call of the fake `fetch`. */
export interface RecordedCall {
  readonly url: string
  readonly headers: Headers
  readonly body: Record<string, unknown>
}

/** The `data:` lines of a Chat Completions stream, as objects (`[DONE]` is appended by `fakeFetch`). */
export type SseData = readonly Record<string, unknown>[]

function delta(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  }
}

/** A streamed text answer, one `content` delta per piece. */
export function sseText(...pieces: string[]): SseData {
  return [
    delta({ role: 'assistant', content: '' }),
    ...pieces.map((content) => delta({ content })),
    delta({}, 'stop'),
  ]
}

/** One streamed tool call. */
export function sseToolCall(id: string, name: string, args: string): SseData {
  return [
    delta({ role: 'assistant', content: null }),
    delta({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: args } }] }),
    delta({}, 'tool_calls'),
  ]
}

/** A `fetch` that answers call N with `responses[N]` and records every request it was sent. */
export function fakeFetch(responses: readonly SseData[]): { fetch: typeof fetch; calls: RecordedCall[] } {
  const calls: RecordedCall[] = []
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = JSON.parse(String(init?.body)) as Record<string, unknown>
    calls.push({ url: String(input), headers: new Headers(init?.headers), body })
    const data = responses[calls.length - 1]
    if (data === undefined) return new Response('{"error":{"message":"no more responses"}}', { status: 500 })
    const text = [...data.map((item) => JSON.stringify(item)), '[DONE]']
      .map((line) => `data: ${line}\n\n`)
      .join('')
    return new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } })
  }
  return { fetch: fetchImpl as typeof fetch, calls }
}
