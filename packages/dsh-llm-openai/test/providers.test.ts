/**
 * The recorded-response fixture set, replayed: every fixture is served from a local server in uneven
 * writes and mapped by the adapter inside a checked app; each tool-call fixture also drives one full
 * agent turn with every invariant check mounted.
 */
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { createCheckedApp } from 'dsh-invariants/vitest'
import { type StreamChunk, userText } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { chunk, collect, prompt, sseBody } from './helpers.ts'
import { fixtureReply, loadProviderFixtures, type ProviderFixture, summarize } from './provider-fixtures.ts'
import { type FixtureServer, sseReply, startServer } from './server.ts'

const fixtures = loadProviderFixtures()

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

function adapter(fixture: ProviderFixture, warnings: string[]) {
  return openAiCompatible({
    baseURL: server.baseURL,
    apiKey: 'sk-fixture',
    name: fixture.provider,
    onWarning: (warning) => warnings.push(warning.code),
  })
}

describe('the fixture set', () => {
  it('holds at least 30 recorded responses from at least ten providers, each naming its source', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(30)
    expect(new Set(fixtures.map((fixture) => fixture.provider)).size).toBeGreaterThanOrEqual(10)
    for (const fixture of fixtures) expect(fixture.source, fixture.name).toMatch(/^https:\/\//)
  })
})

describe.each(fixtures)('$name ($shape)', (fixture) => {
  it('maps to the expected text, reasoning, tool calls, finish, usage and failure', async () => {
    for (const offset of [0, 3]) {
      const warnings: string[] = []
      server.reply(fixtureReply(fixture, offset))
      const app = await createCheckedApp()
      app.llm.registerAdapter(fixture.provider, adapter(fixture, warnings))
      const chunks = await collect(
        app.llm.stream(prompt('hi', { provider: fixture.provider, model: fixture.model })),
      )
      expect(summarize(chunks, warnings)).toEqual(fixture.expect)
      if (fixture.expect.error !== undefined) expectClearMessage(fixture, chunks)
    }
  })

  if (fixture.expect.toolCalls !== undefined) {
    const calls = fixture.expect.toolCalls
    it('drives one full agent turn: every call runs once and the next request carries it back', async () => {
      const app = await createCheckedApp()
      await app.plugin(ToolRegistry)
      await app.plugin(AgentLoop)
      app.llm.registerAdapter(fixture.provider, adapter(fixture, []))
      for (const name of new Set(calls.map((call) => call.name))) {
        app.tools.register({
          name,
          description: `fixture tool ${name}`,
          parameters: z.looseObject({}),
          execute: (args) => `ran ${name} with ${JSON.stringify(args)}`,
        })
      }
      server.reply(fixtureReply(fixture))
      server.reply(sseReply(sseBody([chunk({ content: 'All done.' }), chunk({}, 'stop')])))
      const sent = server.requests.length
      const agent = await app.agentLoop.create({ provider: fixture.provider, model: fixture.model })
      agent.send(userText('go'))
      await agent.whenIdle()
      const events = agent.session.events
      expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
      const results = events.flatMap((event) =>
        event.type === 'tool/result' ? [[event.data.message.content[0].toolCallId, event.data.error]] : [],
      )
      expect(results).toEqual(calls.map((call) => [call.id, undefined]))
      const second = JSON.parse(server.requests[sent + 1]?.body ?? '{}') as {
        messages: { role: string; tool_calls?: { id: string; function: { arguments: string } }[] }[]
      }
      expect(second.messages.map((message) => message.role)).toEqual([
        'user',
        'assistant',
        ...calls.map(() => 'tool'),
      ])
      expect(second.messages[1]?.tool_calls?.map((call) => [call.id, call.function.arguments])).toEqual(
        calls.map((call) => [call.id, call.arguments]),
      )
      await agent.dispose()
    })
  }
})

/**
 * A failure message names provider and model, the status and the provider's code, and the request id
 * when there is one; it stays short (an HTML page is summarised, never quoted whole).
 */
function expectClearMessage(fixture: ProviderFixture, chunks: readonly StreamChunk[]): void {
  const last = chunks.at(-1)
  if (last?.type !== 'finish' || last.reason.kind !== 'error')
    throw new Error(`${fixture.name}: no error finish`)
  const { message, status, providerCode, requestId } = last.reason.failure
  expect(message.startsWith(`${fixture.provider} (model ${fixture.model})`), message).toBe(true)
  if (status !== undefined) expect(message).toContain(`HTTP ${status}`)
  if (providerCode !== undefined) expect(message).toContain(providerCode)
  if (requestId !== undefined && status !== undefined) expect(message).toContain(`[request ${requestId}]`)
  expect(message.length, message).toBeLessThan(400)
  expect(message).not.toContain('</')
}
