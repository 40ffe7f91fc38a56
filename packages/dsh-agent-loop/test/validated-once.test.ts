/**
 * A user message is validated once on its way in (issue 30): `agent.send()` checks it with
 * dsh-session's checker, and the inbox splice, the claim, the pre-step batch and the `user/message`
 * append take that checked, frozen message without checking it again. Counted on dsh-session's
 * acceptance check (`isUserMessage`, which every user-message validation runs first), so this test
 * reaches into dsh-session's source for the module to count; no invariants are mounted here, since
 * their re-derivation is a deliberate second, independent reading of the log.
 */
import { Context } from 'cordis'
import AgentLoop, { ToolRegistry } from 'dsh-agent-loop'
import { createUserMessage, LlmRuntime, MessageId } from 'dsh-llm'
import { scriptedAdapter, textResponse } from 'dsh-llm/testing'
import { Sessions } from 'dsh-session'
import { describe, expect, it, vi } from 'vitest'

const checks = vi.hoisted(() => new Map<string, number>())

vi.mock('../../dsh-session/src/fast-blocks.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../dsh-session/src/fast-blocks.ts')>()
  return {
    ...original,
    isUserMessage: (value: unknown) => {
      const id = (value as { id?: unknown } | null)?.id
      if (typeof id === 'string') checks.set(id, (checks.get(id) ?? 0) + 1)
      return original.isUserMessage(value)
    },
  }
})

async function app() {
  const ctx = new Context()
  await ctx.plugin(LlmRuntime)
  await ctx.plugin(Sessions)
  await ctx.plugin(ToolRegistry)
  await ctx.plugin(AgentLoop)
  const model = scriptedAdapter([textResponse('hello'), textResponse('again')])
  ctx.llm.registerAdapter(['test'], model)
  return ctx
}

const message = (id: string, text: string) =>
  createUserMessage({ id: MessageId(id), content: [{ type: 'text', text }], source: { kind: 'user' } })

describe('a user message on its way in', () => {
  it('is validated once from send to its user/message event', async () => {
    const ctx = await app()
    const agent = await ctx.agentLoop.create({ provider: 'test', model: 'm' })
    checks.clear()
    agent.send(message('m-sent', 'count me'))
    await agent.whenIdle()
    expect(agent.session.events.map((event) => event.type)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'assistant/chunk',
      'assistant/chunk',
      'assistant/chunk',
      'assistant/chunk',
      'assistant/chunk',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(checks.get('m-sent')).toBe(1)
  })

  it('is validated once when injected between turns, and a steered one once too', async () => {
    const ctx = await app()
    const agent = await ctx.agentLoop.create({ provider: 'test', model: 'm' })
    checks.clear()
    agent.inject(message('m-injected', 'context'))
    await agent.whenIdle()
    agent.steer(message('m-steered', 'steer'))
    await agent.whenIdle()
    expect(Object.fromEntries(checks)).toEqual({ 'm-injected': 1, 'm-steered': 1 })
  })

  it('a copy that was never checked is still checked in full when appended directly', async () => {
    const ctx = await app()
    const session = await ctx.sessions.create()
    checks.clear()
    const plain = {
      id: 'm-plain',
      role: 'user',
      content: [{ type: 'text', text: 'x' }],
      source: { kind: 'user' },
    }
    session.append('user/message', plain as never)
    expect(() =>
      session.append('user/message', {
        ...plain,
        id: 'm-bad',
        content: [{ type: 'text', text: 1 }],
      } as never),
    ).toThrow(/user\/message.*data\.content\[0\]\.text/)
    expect(Object.fromEntries(checks)).toEqual({ 'm-plain': 1, 'm-bad': 1 })
  })
})
