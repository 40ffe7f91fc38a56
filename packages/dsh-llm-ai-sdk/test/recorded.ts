/**
 * Recorded provider responses played through the real provider packages: a custom `fetch` answers
 * each call with the next recorded response (server-sent events, a JSON body, or AWS event-stream
 * frames) and keeps every request body exactly as the provider package serialized it. No network.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'

/** One server-sent event: `event:` (optional) and `data:` (a value is JSON-encoded, a string sent as is). */
export interface SseEvent {
  readonly event?: string
  readonly data: unknown
}

/** One AWS event-stream frame: an event (`:message-type` event) or an exception. */
export interface Frame {
  readonly eventType?: string
  readonly exceptionType?: string
  readonly payload: unknown
}

/** A recorded response, named by where its body comes from. */
export interface Recorded {
  /** Where the body's shape (and most of its text) comes from: a provider doc, an SDK test fixture, a bug report. */
  readonly source: string
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  readonly sse?: readonly SseEvent[]
  /** After the events, `data: [DONE]` (OpenAI-style streams). */
  readonly done?: boolean
  readonly json?: unknown
  readonly frames?: readonly Frame[]
}

/** One request a provider package made. */
export interface CapturedRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** The body as sent, byte for byte. */
  readonly body: string
}

/** A fetch that plays `script` in order, and what it was asked. */
export interface RecordedFetch {
  readonly fetch: typeof fetch
  readonly requests: CapturedRequest[]
}

const codec = new EventStreamCodec(toUtf8, fromUtf8)

/** The body bytes of `recorded`. */
export function bodyOf(recorded: Recorded): Uint8Array {
  if (recorded.frames !== undefined) {
    const frames = recorded.frames.map((frame) => {
      const headers: Record<string, { type: 'string'; value: string }> =
        frame.exceptionType === undefined
          ? {
              ':message-type': { type: 'string', value: 'event' },
              ':event-type': { type: 'string', value: frame.eventType ?? '' },
              ':content-type': { type: 'string', value: 'application/json' },
            }
          : {
              ':message-type': { type: 'string', value: 'exception' },
              ':exception-type': { type: 'string', value: frame.exceptionType },
              ':content-type': { type: 'string', value: 'application/json' },
            }
      return codec.encode({ headers, body: fromUtf8(JSON.stringify(frame.payload)) })
    })
    const out = new Uint8Array(frames.reduce((sum, frame) => sum + frame.length, 0))
    let at = 0
    for (const frame of frames) {
      out.set(frame, at)
      at += frame.length
    }
    return out
  }
  if (recorded.sse !== undefined) {
    let text = ''
    for (const event of recorded.sse) {
      if (event.event !== undefined) text += `event: ${event.event}\n`
      text += `data: ${typeof event.data === 'string' ? event.data : JSON.stringify(event.data)}\n\n`
    }
    if (recorded.done === true) text += 'data: [DONE]\n\n'
    return new TextEncoder().encode(text)
  }
  return new TextEncoder().encode(JSON.stringify(recorded.json ?? {}))
}

function contentType(recorded: Recorded): string {
  if (recorded.frames !== undefined) return 'application/vnd.amazon.eventstream'
  return recorded.sse !== undefined ? 'text/event-stream' : 'application/json'
}

/**
 * A fetch answering call n with `script[n]`; a call past the end answers 500 with a body naming
 * the overrun, so a test that makes one call too many fails on the next assertion.
 */
export function recordedFetch(script: readonly Recorded[]): RecordedFetch {
  const requests: CapturedRequest[] = []
  let next = 0
  const play: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value
    })
    const body = typeof init?.body === 'string' ? init.body : init?.body == null ? '' : String(init.body)
    requests.push({ url, headers, body })
    const recorded = script[next++]
    if (recorded === undefined) {
      return new Response(JSON.stringify({ error: { message: `no recorded response for call ${next}` } }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      })
    }
    const signal = init?.signal
    if (signal?.aborted === true) throw signal.reason
    return new Response(bodyOf(recorded), {
      status: recorded.status ?? 200,
      headers: { 'content-type': contentType(recorded), ...(recorded.headers ?? {}) },
    })
  }
  return { fetch: play, requests }
}
