/**
 * A key given to the adapter — as `apiKey`, in a header, in the base URL's userinfo or query — never
 * appears in what the adapter renders: failure messages of every path, warnings, construction errors.
 * And a base URL's query string stays on the URL, after the joined path.
 */
import { HarnessError, type LlmFailure, REDACTED, type StreamChunk } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chunk, prompt, run, sseBody } from './helpers.ts'
import { type FixtureServer, fixture, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const KEY = 'sk-adapter-secret-4711'

function failureOf(chunks: readonly StreamChunk[]): LlmFailure {
  const last = chunks.at(-1)
  if (last?.type !== 'finish' || !('failure' in last.reason)) throw new Error('no failure finish')
  return last.reason.failure
}

describe('a base URL with a query string', () => {
  it('keeps the query after the joined path', async () => {
    server.reply(sseReply(fixture('text.sse')))
    await run(openAiCompatible({ baseURL: `${server.baseURL}/?api-version=2024-10-21` }), prompt())
    expect(server.requests.at(-1)?.url).toBe('/v1/chat/completions?api-version=2024-10-21')
  })

  it('drops a fragment and trailing slashes of the path, keeping the query', async () => {
    server.reply(sseReply(fixture('text.sse')))
    const base = server.baseURL.replace('/v1', '/openai/deployments/gpt//')
    await run(openAiCompatible({ baseURL: `${base}?api-version=1&x=y#frag` }), prompt())
    expect(server.requests.at(-1)?.url).toBe('/openai/deployments/gpt/chat/completions?api-version=1&x=y')
  })
})

describe('a key never appears in what the adapter renders', () => {
  const keyed = () => `${server.baseURL}?api-key=${KEY}`

  it('an HTTP error that echoes the key, named by a base URL carrying the key', async () => {
    server.reply({
      status: 401,
      headers: { 'content-type': 'application/json' },
      writes: [
        JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}`, code: 'invalid_api_key' } }),
      ],
    })
    const failure = failureOf(await run(openAiCompatible({ baseURL: keyed(), apiKey: KEY }), prompt()))
    expect(server.requests.at(-1)?.url).toBe(`/v1/chat/completions?api-key=${KEY}`)
    expect(failure).toEqual({
      code: 'AUTH',
      status: 401,
      providerCode: 'invalid_api_key',
      message: `${server.baseURL}?api-key=${REDACTED} (model test-model): HTTP 401 invalid_api_key: Incorrect API key provided: ${REDACTED}`,
    })
  })

  it('a refused connection to a URL with credentials in its userinfo and query', async () => {
    const url = `http://user:${KEY}@127.0.0.1:9/v1?api-key=${KEY}`
    const failure = failureOf(await run(openAiCompatible({ baseURL: url }), prompt()))
    expect(failure.code).toBe('TRANSPORT')
    expect(failure.message).not.toContain(KEY)
    expect(failure.message).toContain(
      `http://${REDACTED}@127.0.0.1:9/v1?api-key=${REDACTED} (model test-model)`,
    )
  })

  it('a timeout and an in-band error event', async () => {
    server.reply({ silent: true })
    const timeout = failureOf(await run(openAiCompatible({ baseURL: keyed(), timeoutMs: 50 }), prompt()))
    expect(timeout.code).toBe('TIMEOUT')
    expect(timeout.message).toBe(
      `${server.baseURL}?api-key=${REDACTED} (model test-model): no data from ${server.baseURL}/chat/completions?api-key=${REDACTED} for 50 ms (timeoutMs)`,
    )
    server.reply(
      sseReply(
        sseBody([chunk({ content: 'a' }), { error: { message: `key ${KEY} is over quota`, code: 'x' } }]),
      ),
    )
    const inBand = failureOf(await run(openAiCompatible({ baseURL: server.baseURL, apiKey: KEY }), prompt()))
    expect(inBand.message).toBe(
      `${server.baseURL} (model test-model): error event x: key ${REDACTED} is over quota`,
    )
  })

  it('a key in a custom header (Azure api-key) is redacted from messages too', async () => {
    const headerKey = 'azure-header-key-0042'
    server.reply({
      status: 500,
      headers: { 'content-type': 'application/json' },
      writes: [JSON.stringify({ error: { message: `bad header api-key ${headerKey}` } })],
    })
    const failure = failureOf(
      await run(openAiCompatible({ baseURL: server.baseURL, headers: { 'api-key': headerKey } }), prompt()),
    )
    expect(failure.message).toBe(
      `${server.baseURL} (model test-model): HTTP 500: bad header api-key ${REDACTED}`,
    )
  })

  it('a construction error quoting the base URL', () => {
    let error: unknown
    try {
      openAiCompatible({ baseURL: `ftp://u:${KEY}@host/v1?token=${KEY}` })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(HarnessError)
    expect((error as Error).message).toBe(
      `openAiCompatible: baseURL must be an absolute http(s) URL, got "ftp://${REDACTED}@host/v1?token=${REDACTED}"`,
    )
  })

  it('a warning names the provider by its redacted base URL', async () => {
    const warnings: string[] = []
    server.reply(
      sseReply(
        sseBody([
          chunk({ content: 'a' }),
          { choices: [{ index: 1, delta: { content: 'b' } }] },
          chunk({}, 'stop'),
        ]),
      ),
    )
    await run(openAiCompatible({ baseURL: keyed(), onWarning: (w) => warnings.push(w.message) }), prompt())
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`${server.baseURL}?api-key=${REDACTED} (model test-model)`)
  })
})
