import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse } from 'dsh-llm/testing'
import { interruptedTurnClosers, type SessionEvent, Sessions } from 'dsh-session'
import { buildViewData } from 'dsh-viewer'
import { beforeAll, expect, it } from 'vitest'
import { recordSession } from './session.ts'

let events: readonly SessionEvent[]
beforeAll(async () => {
  events = await recordSession()
})

it('places a violation at the event that breaks the log, and still shows the rest', () => {
  const firstStepEnd = events.findIndex((e) => e.type === 'step/end')
  const broken = events.filter((_, i) => i !== firstStepEnd)
  const data = buildViewData({ file: 'broken.jsonl', events: broken })
  expect(data.violations.length).toBeGreaterThan(0)
  expect(data.violations[0]).toMatchObject({ check: 'log-grammar', index: firstStepEnd })
  expect(data.violations[0]?.message).toContain(`seq ${firstStepEnd + 1}`)
  expect(data.turns).toHaveLength(2)
})

it('marks the repair closers of an interrupted turn', () => {
  const open = events.slice(
    0,
    events.findIndex((e) => e.type === 'tool/result'),
  )
  const closers = interruptedTurnClosers(open)
  let seq = open.length
  const repaired = [...open, ...closers.map((c) => ({ ...c, seq: seq++, time: 0 }) as SessionEvent)]
  const data = buildViewData({ file: 'repaired.jsonl', events: repaired })
  expect(data.repairs.map((i) => repaired[i]?.type)).toEqual([
    'tool/result',
    'tool/result',
    'step/end',
    'turn/end',
  ])
  expect(data.repairs[0]).toBe(open.length)
  expect(data.turns[0]?.endReason).toBe('interrupted')
  expect(data.turns[0]?.steps[0]?.tools.map((t) => t.errorCode)).toEqual([
    'TOOL_OUTCOME_UNKNOWN',
    'TOOL_OUTCOME_UNKNOWN',
  ])
})

it('tells inbox-borne user messages from injected ones', async () => {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter('test', scriptedAdapter([textResponse('ok')]))
  const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
  agent.inject(userText('The user opened main.ts.', { kind: 'plugin', plugin: 'editor' }))
  agent.send(userText('hi'))
  await agent.whenIdle()
  const log = agent.session.events
  await agent.dispose()
  const data = buildViewData({ file: 'x.jsonl', events: log })
  const userMessages = log.flatMap((e, i) => (e.type === 'user/message' ? [i] : []))
  expect(
    userMessages.map(
      (i) => (log[i]?.data as unknown as { content: [{ text: string }] } | undefined)?.content[0].text,
    ),
  ).toEqual(['The user opened main.ts.', 'hi'])
  expect(data.injected).toEqual([userMessages[0]])
  expect(data.inbox.map((i) => log[i]?.type)).toEqual(['agent/inbox/spliced', 'agent/inbox/spliced'])
})
