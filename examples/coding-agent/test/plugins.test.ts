/** Mounts each plugin of docs/writing-a-plugin.md (snippets/plugins.ts) and pins what it does. */
import { AgentLoop, type AgentOptions, ToolRegistry } from 'dsh-agent-loop'
import { createCheckedApp } from 'dsh-invariants/vitest'
import { type LlmRequest, type Message, messageText, type Usage, userText } from 'dsh-llm'
import {
  errorResponse,
  type ScriptStep,
  scriptedAdapter,
  textResponse,
  toolCallResponse,
} from 'dsh-llm/testing'
import type { SessionEvent } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  BranchContext,
  CheapFollowUps,
  FinishCheck,
  OutputLimit,
  Preferences,
  ReadOnly,
  RetryOverloaded,
  SecretGuard,
  SkillsCatalog,
  ToolCounts,
  TopicClassifier,
  toolCounts,
  UsageMeter,
} from '../snippets/plugins.ts'

/** A checked app (every invariant mounted) with tools, the agent loop and `script` as provider `test`. */
async function stack(script: readonly ScriptStep[]) {
  const app = await createCheckedApp()
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  const model = scriptedAdapter(script)
  app.llm.registerAdapter('test', model)
  app.tools.register({
    name: 'echo',
    description: 'Echo the text',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => text,
  })
  const run = async (prompt: string, options: Partial<AgentOptions> = {}) => {
    const agent = await app.agentLoop.create({ provider: 'test', model: 'm', ...options })
    agent.send(userText(prompt))
    await agent.whenIdle()
    return agent.session
  }
  return { app, model, run }
}

const texts = (messages: readonly Message[]) => messages.map((message) => messageText(message))
const lastTurnEnd = (events: readonly SessionEvent[]) =>
  events.findLast((event) => event.type === 'turn/end')?.data

describe('agent/session-prefix', () => {
  it('opens every request with the catalog, recorded in the header and not in the history', async () => {
    const { app, model, run } = await stack([textResponse('ok')])
    await app.plugin(SkillsCatalog)
    const session = await run('hi')
    expect(texts(model.requests[0]?.messages ?? [])).toEqual([
      'Skills: /review reviews a diff, /explain explains a file.',
      'hi',
    ])
    expect(session.requestHeader()?.header.messagePrefix?.map((m) => m.source)).toEqual([
      { kind: 'plugin', plugin: 'skills-catalog' },
    ])
    expect(texts(session.deriveMessages())).toEqual(['hi', 'ok'])
  })
})

describe('agent/pre-step', () => {
  it('adds the branch after the prompt of the first step', async () => {
    const { app, model, run } = await stack([
      toolCallResponse('c1', 'echo', { text: 'x' }),
      textResponse('ok'),
    ])
    await app.plugin(BranchContext, { branch: () => 'main' })
    await run('hi')
    expect(texts(model.requests[0]?.messages ?? [])).toEqual(['hi', 'Current branch: main'])
    expect(texts(model.requests[1]?.messages ?? [])).toEqual(['hi', 'Current branch: main', '', ''])
  })

  it('rejects a step carrying a secret: no model call, the turn ends blocked', async () => {
    const { app, model, run } = await stack([textResponse('never sent')])
    await app.plugin(BranchContext, { branch: () => 'main' })
    await app.plugin(SecretGuard)
    const session = await run('deploy with sk-abcdefghijklmnop1234')
    expect(model.callCount).toBe(0)
    expect(lastTurnEnd(session.events)).toEqual({ turn: 1, reason: { kind: 'blocked' } })
    expect(session.events.some((event) => event.type === 'user/message')).toBe(false)
  })
})

describe('agent/system-prompt', () => {
  it('appends the preferences to the configured system prompt', async () => {
    const { app, model, run } = await stack([textResponse('ok')])
    await app.plugin(Preferences, { preferences: 'Use British spelling.' })
    await run('hi', { system: 'Be brief.' })
    expect(model.requests[0]?.system).toBe('Be brief.\n\nUse British spelling.')
  })
})

describe('agent/request', () => {
  it('sends later steps to the cheaper model and logs the switch as a change header', async () => {
    const { app, model, run } = await stack([
      toolCallResponse('c1', 'echo', { text: 'x' }),
      textResponse('ok'),
    ])
    await app.plugin(CheapFollowUps, { model: 'small' })
    const session = await run('hi')
    expect(model.requests.map((request) => request.model)).toEqual(['m', 'small'])
    const headers = session.events.flatMap((event) => (event.type === 'request/header' ? [event.data] : []))
    expect(headers.map((header) => [header.reason, header.header.config.model])).toEqual([
      ['initial', 'm'],
      ['change', 'small'],
    ])
  })
})

describe('agent/request-error', () => {
  it('retries OVERLOADED inside the same step', async () => {
    const { app, model, run } = await stack([
      errorResponse('OVERLOADED', 'busy', { retryAfterMs: 5 }),
      textResponse('ok'),
    ])
    await app.plugin(RetryOverloaded)
    const session = await run('hi')
    expect(model.callCount).toBe(2)
    expect(session.events.filter((event) => event.type === 'step/start')).toHaveLength(1)
    expect(lastTurnEnd(session.events)).toEqual({ turn: 1, reason: { kind: 'completed' } })
  })

  it('leaves other failures to the agent policy (AUTH is not retried)', async () => {
    const { app, model, run } = await stack([errorResponse('AUTH', 'bad key'), textResponse('ok')])
    await app.plugin(RetryOverloaded)
    const session = await run('hi')
    expect(model.callCount).toBe(1)
    expect(lastTurnEnd(session.events)).toEqual({
      turn: 1,
      reason: { kind: 'error', failure: { code: 'AUTH', message: 'bad key' } },
    })
  })
})

describe('agent/turn-stopping', () => {
  it('steers once when the answer does not say the tests pass', async () => {
    const { app, model, run } = await stack([textResponse('Done.'), textResponse('Ran them: tests pass.')])
    await app.plugin(FinishCheck)
    const session = await run('fix it')
    expect(model.callCount).toBe(2)
    expect(texts(model.requests[1]?.messages ?? [])).toEqual([
      'fix it',
      'Done.',
      'Run the tests before you finish.',
    ])
    expect(lastTurnEnd(session.events)).toEqual({ turn: 1, reason: { kind: 'completed' } })
  })
})

describe('tools/pre-execute', () => {
  it('denies a writing tool; the model gets an error result with the reason', async () => {
    const { app, model, run } = await stack([
      toolCallResponse('c1', 'echo', { text: 'x' }),
      textResponse('ok'),
    ])
    await app.plugin(ReadOnly, { writers: ['echo'] })
    const session = await run('hi')
    const result = session.events.find((event) => event.type === 'tool/result')
    expect(result?.type === 'tool/result' && result.data.error).toEqual({
      code: 'TOOL_DENIED',
      message: 'tool "echo" (call c1) was denied: the session is read-only',
    })
    expect(model.requests[1]?.messages.at(-1)?.content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'c1',
        content: [{ type: 'text', text: 'tool "echo" (call c1) was denied: the session is read-only' }],
        isError: true,
      },
    ])
  })
})

describe('tools/post-execute', () => {
  it('cuts long output and adds a context message after the tool results', async () => {
    const { app, model, run } = await stack([
      toolCallResponse('c1', 'echo', { text: 'x'.repeat(50) }),
      textResponse('ok'),
    ])
    await app.plugin(OutputLimit, { maxChars: 10 })
    await run('hi')
    const messages = model.requests[1]?.messages ?? []
    expect(messages.at(-2)?.content).toEqual([
      { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'xxxxxxxxxx' }] },
    ])
    expect(messages.at(-1)).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: 'The output of echo was cut to 10 of 50 characters.' }],
      source: { kind: 'plugin', plugin: 'output-limit' },
    })
  })
})

describe('llm/stream', () => {
  it('reports the usage of every model call', async () => {
    const { app, run } = await stack([textResponse('ok', { usage: { inputTokens: 12, outputTokens: 3 } })])
    const reports: [Usage, string][] = []
    await app.plugin(UsageMeter, {
      report: (usage: Usage, request: LlmRequest) => reports.push([usage, request.model]),
    })
    await run('hi')
    expect(reports).toEqual([[{ inputTokens: 12, outputTokens: 3 }, 'm']])
  })

  it('lets a plugin call a classifier of its own: reported as outside the step, the step checked', async () => {
    const { app, model, run } = await stack([textResponse('code'), textResponse('ok')])
    const verdicts: string[] = []
    await app.plugin(TopicClassifier, {
      model: 'classifier',
      report: (verdict: string) => verdicts.push(verdict),
    })
    await run('fix the build')
    expect(verdicts).toEqual(['code'])
    expect(model.requests.map((request) => request.model)).toEqual(['classifier', 'm'])
    expect(app.invariants.counters).toMatchObject({ requestsChecked: 1, requestsOutsideSteps: 1 })
  })
})

describe('projections', () => {
  it('counts tool calls per session, built lazily over existing history', async () => {
    const { app, run } = await stack([
      toolCallResponse('c1', 'echo', { text: 'a' }),
      toolCallResponse('c2', 'echo', { text: 'b' }),
      textResponse('ok'),
    ])
    const session = await run('hi')
    await app.plugin(ToolCounts)
    expect(app.sessionProjections.get(session, toolCounts.key)).toEqual({ echo: 2 })
  })
})
