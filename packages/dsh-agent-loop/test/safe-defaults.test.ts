/** Safe defaults: a step limit per turn, a known provider at create, the needed plugins mounted. */
import { Context } from 'cordis'
import {
  AgentLoop,
  AgentLoopError,
  AgentLoopErrorCode,
  DEFAULT_MAX_STEPS,
  ToolRegistry,
} from 'dsh-agent-loop'
import { LlmRuntime } from 'dsh-llm'
import { toolCallResponse } from 'dsh-llm/testing'
import { Sessions } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { createHarness, echoTool, lastTurnEnd } from './harness.ts'

describe('the default step limit', () => {
  it(`stops a model that calls tools forever after ${DEFAULT_MAX_STEPS} steps`, async () => {
    expect(DEFAULT_MAX_STEPS).toBe(50)
    const script = Array.from({ length: DEFAULT_MAX_STEPS + 5 }, (_, i) =>
      toolCallResponse(`c${i}`, 'echo', { text: String(i) }),
    )
    const h = await createHarness(script)
    echoTool(h)
    const agent = await h.run('loop')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'max-steps', limit: DEFAULT_MAX_STEPS })
    expect(h.model.callCount).toBe(DEFAULT_MAX_STEPS)
  })

  it('is lifted by maxSteps: Infinity', async () => {
    const script = Array.from({ length: DEFAULT_MAX_STEPS + 2 }, (_, i) =>
      toolCallResponse(`c${i}`, 'echo', { text: String(i) }),
    )
    const h = await createHarness(script)
    echoTool(h)
    const agent = await h.run('loop', { maxSteps: Infinity })
    // The script runs out after 52 calls: the 53rd call fails the turn, not a step limit.
    expect(h.model.callCount).toBe(DEFAULT_MAX_STEPS + 3)
    expect(lastTurnEnd(agent.session)).toMatchObject({ kind: 'error', failure: { code: 'SCRIPT_EXHAUSTED' } })
  })
})

describe('create and resume refuse an unknown provider', () => {
  it('names the provider and the registered ones', async () => {
    const h = await createHarness()
    const error = await h.app.agentLoop.create({ provider: 'deepsek', model: 'm' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AgentLoopError)
    expect(error).toMatchObject({
      code: AgentLoopErrorCode.UNKNOWN_PROVIDER,
      message:
        'agentLoop.create: no adapter is registered for provider "deepsek" (registered: "test"); call app.llm.registerAdapter("deepsek", adapter) first',
    })
  })

  it('on resume too', async () => {
    const h = await createHarness()
    const agent = await h.create()
    await agent.dispose()
    await expect(
      h.app.agentLoop.resume(agent.session.id, { provider: 'nope', model: 'm' }),
    ).rejects.toMatchObject({
      code: AgentLoopErrorCode.UNKNOWN_PROVIDER,
    })
  })
})

describe('a plugin AgentLoop needs is missing', () => {
  const cases = [
    { missing: 'LlmRuntime', service: 'llm' },
    { missing: 'Sessions', service: 'sessions' },
    { missing: 'ToolRegistry', service: 'tools' },
  ] as const
  for (const { missing, service } of cases) {
    it(`mounting AgentLoop without ${missing} rejects with MISSING_PLUGIN naming it`, async () => {
      const app = new Context()
      if (missing !== 'LlmRuntime') await app.plugin(LlmRuntime)
      if (missing !== 'Sessions' && missing !== 'LlmRuntime') await app.plugin(Sessions)
      if (missing !== 'ToolRegistry') await app.plugin(ToolRegistry)
      const error = await Promise.resolve(app.plugin(AgentLoop)).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(AgentLoopError)
      expect(error).toMatchObject({
        code: AgentLoopErrorCode.MISSING_PLUGIN,
        message: `AgentLoop needs ctx.${service}, which the ${missing} plugin provides: await app.plugin(${missing}) before app.plugin(AgentLoop)`,
      })
    })
  }
})
