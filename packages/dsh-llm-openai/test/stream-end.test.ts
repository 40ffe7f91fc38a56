/**
 * Streams that stop before the protocol's end (no finish_reason and no [DONE]) — a clean end, a dead
 * socket, a stall — are retryable failures, never completed steps; streams whose protocol did end keep
 * the "missing finish = stop" default. Checked at the adapter and through full agent turns.
 */
import type { Context } from 'cordis'
import { type Agent, AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { createCheckedApp } from 'dsh-invariants/vitest'
import { CallId, type StreamChunk, userText } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { chunk, prompt, run, sseBody } from './helpers.ts'
import { loadProviderFixtures } from './provider-fixtures.ts'
import { type FixtureServer, type Reply, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

/** `timeoutMs` is short only where a stall is the point; elsewhere a loaded machine must not time out. */
const options = (timeoutMs = 10_000) => ({
  baseURL: server.baseURL,
  apiKey: 'sk-test',
  timeoutMs,
  name: 'local',
})
const where = 'local (model test-model)'

/** A tool call whose arguments stop halfway: two events, then nothing more from the server. */
const halfToolCall = sseBody(
  [
    chunk({
      tool_calls: [
        { index: 0, id: 'call_half', type: 'function', function: { name: 'read', arguments: '' } },
      ],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path": "sr' } }] }),
  ],
  false,
)
const halfToolCallChunks: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'tool-call' },
  { type: 'tool-call-delta', index: 0, id: CallId('call_half'), name: 'read', argumentsDelta: '' },
  { type: 'tool-call-delta', index: 0, id: CallId('call_half'), argumentsDelta: '{"path": "sr' },
]

describe('the adapter: a stream that stops before its protocol ended', () => {
  it('a clean end with neither finish_reason nor [DONE] is TRANSPORT, with no block-end for the half call', async () => {
    server.reply(sseReply(halfToolCall))
    expect(await run(openAiCompatible(options()), prompt())).toEqual([
      ...halfToolCallChunks,
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'TRANSPORT',
            message: `${where}: the stream ended after 2 SSE events with neither a finish_reason nor [DONE]; the answer is incomplete`,
            requestId: 'req-fixture',
          },
        },
      },
    ] satisfies StreamChunk[])
  })

  it('a socket that dies mid tool call is TRANSPORT', async () => {
    server.reply(sseReply(halfToolCall, [], { after: 'destroy', delayMs: 5 }))
    const chunks = await run(openAiCompatible(options()), prompt())
    expect(chunks.slice(0, -1)).toEqual(halfToolCallChunks)
    expect(chunks.at(-1)).toMatchObject({
      type: 'finish',
      reason: { kind: 'error', failure: { code: 'TRANSPORT' } },
    })
  })

  it('a server that stalls mid tool call past timeoutMs is TIMEOUT', async () => {
    server.reply(sseReply(halfToolCall, [], { after: 'hang' }))
    const chunks = await run(openAiCompatible(options(150)), prompt())
    expect(chunks.slice(0, -1)).toEqual(halfToolCallChunks)
    expect(chunks.at(-1)).toMatchObject({
      type: 'finish',
      reason: { kind: 'error', failure: { code: 'TIMEOUT' } },
    })
  })

  it('[DONE] without any finish_reason ended the protocol properly: the answer completes as stop', async () => {
    server.reply(sseReply(sseBody([chunk({ content: 'Hi' })])))
    expect(await run(openAiCompatible(options()), prompt())).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hi' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Hi' } },
      { type: 'finish', reason: { kind: 'stop' } },
    ] satisfies StreamChunk[])
  })

  it('once finish_reason arrived, a socket dying before [DONE] still completes the answer', async () => {
    server.reply(
      sseReply(sseBody([chunk({ content: 'Hi' }), chunk({}, 'stop')], false), [], {
        after: 'destroy',
        delayMs: 20,
      }),
    )
    expect((await run(openAiCompatible(options()), prompt())).at(-1)).toEqual({
      type: 'finish',
      reason: { kind: 'stop' },
    })
  })
})

describe('the adapter: Retry-After, read defensively', () => {
  const rateLimited = (headers: Record<string, string>): Reply => ({
    status: 429,
    headers: { 'content-type': 'application/json', ...headers },
    writes: [JSON.stringify({ error: { message: 'slow down', code: 'rate_limit_exceeded' } })],
  })
  const retryAfter = async (headers: Record<string, string>) => {
    server.reply(rateLimited(headers))
    const last = (await run(openAiCompatible(options()), prompt())).at(-1)
    return last?.type === 'finish' && last.reason.kind === 'error'
      ? last.reason.failure.retryAfterMs
      : 'no failure'
  }

  it('caps a Retry-After of any size at one day, so the value stays finite JSON', async () => {
    expect(await retryAfter({ 'retry-after': '9'.repeat(400) })).toBe(86_400_000)
    expect(await retryAfter({ 'retry-after-ms': '1'.repeat(400) })).toBe(86_400_000)
    expect(await retryAfter({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' })).toBe(86_400_000)
  })

  it('drops an unparsable or negative Retry-After, so the policy falls back to its backoff', async () => {
    expect(await retryAfter({ 'retry-after': 'soon' })).toBeUndefined()
    expect(await retryAfter({ 'retry-after': '-5' })).toBeUndefined()
    expect(await retryAfter({ 'retry-after': '1e9' })).toBeUndefined()
  })
})

async function agentApp(timeoutMs?: number): Promise<{ app: Context; agent: Agent; ran: string[] }> {
  const app = await createCheckedApp()
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter('local', openAiCompatible(options(timeoutMs)))
  const ran: string[] = []
  app.tools.register({
    name: 'read',
    description: 'reads a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      ran.push(path)
      return `contents of ${path}`
    },
  })
  const agent = await app.agentLoop.create({
    provider: 'local',
    model: 'test-model',
    retry: { initialDelayMs: 0 },
  })
  return { app, agent, ran }
}

const wholeToolCall = sseBody([
  chunk({
    tool_calls: [
      {
        index: 0,
        id: 'call_full',
        type: 'function',
        function: { name: 'read', arguments: '{"path": "src/a.ts"}' },
      },
    ],
  }),
  chunk({}, 'tool_calls'),
])

describe('through the agent loop', () => {
  for (const [how, cut] of [
    ['ends cleanly', sseReply(halfToolCall)],
    ['loses its socket', sseReply(halfToolCall, [], { after: 'destroy', delayMs: 20 })],
    ['stalls', sseReply(halfToolCall, [], { after: 'hang' })],
  ] as const) {
    it(`a stream that ${how} mid tool call is retried: no half call reaches a message, the retry is logged`, async () => {
      const { agent, ran } = await agentApp(how === 'stalls' ? 150 : undefined)
      server.reply(cut)
      server.reply(sseReply(wholeToolCall))
      server.reply(sseReply(sseBody([chunk({ content: 'Read it.' }), chunk({}, 'stop')])))
      agent.send(userText('read src/a.ts'))
      await agent.whenIdle()
      const events = agent.session.events
      expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
      const proposed = events.flatMap((event) =>
        event.type === 'assistant/message'
          ? event.data.message.content.flatMap((block) => (block.type === 'tool-call' ? [block.id] : []))
          : [],
      )
      expect(proposed).toEqual(['call_full'])
      expect(ran).toEqual(['src/a.ts'])
      const retries = events.flatMap((event) => (event.type === 'request/retry' ? [event.data] : []))
      expect(retries.map(({ attempt, delayMs, failure }) => [attempt, delayMs, failure.code])).toEqual([
        [1, 0, how === 'stalls' ? 'TIMEOUT' : 'TRANSPORT'],
      ])
      await agent.dispose()
    })
  }

  it('an empty response is retried once, then the turn ends with a typed EMPTY_RESPONSE error', async () => {
    const { app, agent } = await agentApp()
    const errors: string[] = []
    app.on('agent/error', (_agent, error) => {
      errors.push(`${error.name}:${error.code}`)
    })
    const empty = loadProviderFixtures().find((each) => each.name === 'llamacpp/empty-response.http')
    if (empty === undefined) throw new Error('the llamacpp/empty-response.http fixture is missing')
    server.reply(sseReply(empty.body))
    server.reply(sseReply(empty.body))
    const sent = server.requests.length
    agent.send(userText('say something'))
    await agent.whenIdle()
    expect(server.requests.length - sent).toBe(2)
    const events = agent.session.events
    expect(events.filter((event) => event.type === 'request/retry')).toHaveLength(1)
    expect(events.at(-1)?.data).toMatchObject({
      turn: 1,
      reason: { kind: 'error', failure: { code: 'EMPTY_RESPONSE' } },
    })
    expect(errors).toEqual(['LlmError:EMPTY_RESPONSE'])
    await agent.dispose()
  })
})
