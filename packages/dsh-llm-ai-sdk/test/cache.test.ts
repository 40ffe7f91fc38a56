/**
 * Prompt caching: the cache policy is recorded in the request header, and the breakpoints sit on
 * the system prompt and on the last message of the previous request, so every later step reads the
 * whole earlier request from cache: the bytes before each breakpoint stay identical across steps.
 */
import { userText } from 'dsh-llm'
import { describe, expect, it } from 'vitest'
import { AGENT_OPTIONS, agentApp } from './agent.ts'
import * as fx from './fixtures/anthropic.ts'

interface Body {
  readonly tools?: unknown[]
  readonly system?: { cache_control?: unknown }[]
  readonly messages: { role: string; content: { cache_control?: unknown }[] }[]
}

/** A JSON value with every `cache_control` member removed (a marker is not part of the cached bytes). */
function unmarked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unmarked)
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value)) if (key !== 'cache_control') out[key] = unmarked(member)
  return out
}

/** The indexes of the messages whose last block carries a breakpoint. */
function markedMessages(body: Body): number[] {
  const out: number[] = []
  body.messages.forEach((message, index) => {
    if (message.content.some((part) => part.cache_control !== undefined)) out.push(index)
  })
  return out
}

/** The bytes up to and including message `index` (tools, system, messages), markers left out. */
function prefixBytes(body: Body, index: number): string {
  return JSON.stringify(
    unmarked({ tools: body.tools, system: body.system, messages: body.messages.slice(0, index + 1) }),
  )
}

describe('cache breakpoints over five steps', () => {
  it('each step reads the previous request from cache: the bytes before every breakpoint never change', async () => {
    const script = [fx.toolStep(1), fx.toolStep(2), fx.toolStep(3), fx.toolStep(4), fx.text]
    const { app, recorded, invariants } = await agentApp(script)
    const agent = await app.agentLoop.create(AGENT_OPTIONS)
    agent.send(userText('Keep checking the time in Paris.'))
    await agent.whenIdle()
    const bodies = recorded.requests.map((request) => JSON.parse(request.body) as Body)
    expect(bodies).toHaveLength(5)

    // The policy is in the logged header (prefixMessages filled in by the loop), so re-derivation covers it.
    const header = agent.session.requestHeader()?.header
    expect(header?.config.cachePolicy).toEqual({ breakpoints: 'auto', prefixMessages: 0 })
    expect(invariants.counters.requestsChecked).toBe(5)
    expect(invariants.violations).toEqual([])

    const lengths = bodies.map((body) => body.messages.length)
    expect(lengths).toEqual([1, 3, 5, 7, 9])
    for (const [step, body] of bodies.entries()) {
      // The system prompt (with the tools before it) is always a breakpoint.
      expect(body.system?.at(-1)?.cache_control).toEqual({ type: 'ephemeral' })
      // This request's last message, and the previous request's last message.
      const previous = step === 0 ? [] : [(lengths[step - 1] ?? 0) - 1]
      expect(markedMessages(body)).toEqual([...previous, body.messages.length - 1])
    }
    // Every breakpoint's prefix is byte-identical in every later request.
    let compared = 0
    for (const [step, body] of bodies.entries()) {
      for (const index of markedMessages(body)) {
        const bytes = prefixBytes(body, index)
        for (const later of bodies.slice(step + 1)) {
          expect(prefixBytes(later, index)).toBe(bytes)
          compared++
        }
      }
    }
    expect(compared).toBe(4 + 3 + 3 + 2 + 2 + 1 + 1 + 0)
  })

  it('breakpoints: none leaves the body unmarked', async () => {
    const { app, recorded } = await agentApp([fx.text])
    const agent = await app.agentLoop.create({ ...AGENT_OPTIONS, cachePolicy: { breakpoints: 'none' } })
    agent.send(userText('hi'))
    await agent.whenIdle()
    expect(recorded.requests[0]?.body).not.toContain('cache_control')
  })

  it('an unknown breakpoints mode is refused when the agent is created', async () => {
    const { app } = await agentApp([])
    await expect(
      app.agentLoop.create({ ...AGENT_OPTIONS, cachePolicy: { breakpoints: 'everywhere' as 'auto' } }),
    ).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringContaining(`cachePolicy.breakpoints must be 'auto' or 'none', got "everywhere"`),
    })
  })
})
