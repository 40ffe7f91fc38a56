import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { reconstructRequests } from 'dsh-invariants'
import { type LlmRequest, LlmRuntime, SessionId, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse } from 'dsh-llm/testing'
import type { SessionEvent } from 'dsh-session'
import { Sessions } from 'dsh-session'
import { buildViewData, diffRequests, requestMessages } from 'dsh-viewer'
import { beforeAll, expect, it } from 'vitest'
import { recordSession } from './session.ts'

let events: readonly SessionEvent[]
beforeAll(async () => {
  events = await recordSession()
})

const at = (type: string, nth = 0) =>
  events.map((e, i) => (e.type === type ? i : -1)).filter((i) => i >= 0)[nth] as number

it('resolves every message of every request to exactly the message sent', () => {
  const data = buildViewData({ file: 's.jsonl', events })
  const rebuilt = reconstructRequests(events)
  expect(data.requests).toHaveLength(3)
  for (const request of data.requests) {
    expect(requestMessages(events, data.requests, request.number).map((m) => m.message)).toEqual(
      rebuilt[request.number]?.messages,
    )
  }
})

it('names the event each message came from: header prefix, user/message, assistant/message with its chunks, tool/result', () => {
  const data = buildViewData({ file: 's.jsonl', events })
  const call = (n: number) => data.requests[n]?.chunks
  const sources = requestMessages(events, data.requests, 1).map((m) => m.source)
  expect(sources).toEqual([
    { kind: 'event', index: at('request/header'), prefixIndex: 0 },
    { kind: 'event', index: at('user/message') },
    { kind: 'event', index: at('assistant/message'), chunks: [call(0)?.[0], call(0)?.[1]] },
    { kind: 'event', index: at('tool/result', 0) },
    { kind: 'event', index: at('tool/result', 1) },
  ])
  expect(events[at('assistant/message')]?.type).toBe('assistant/message')
  expect(events[call(0)?.[0] as number]?.type).toBe('assistant/chunk')
})

it('diffs each request against the one before: appends keep the prefix, a system change breaks it', () => {
  const data = buildViewData({ file: 's.jsonl', events })
  expect(data.requests.map((r) => r.diff)).toEqual([
    {
      kept: 0,
      removed: 0,
      added: 2,
      systemChanged: false,
      toolsChanged: false,
      configChanged: [],
      cacheBreak: false,
    },
    {
      previous: 0,
      kept: 2,
      removed: 0,
      added: 3,
      systemChanged: false,
      toolsChanged: false,
      configChanged: [],
      cacheBreak: false,
    },
    {
      previous: 1,
      kept: 5,
      removed: 0,
      added: 2,
      systemChanged: true,
      toolsChanged: false,
      configChanged: ['temperature'],
      cacheBreak: true,
    },
  ])
  // Only the messages past `kept` are stored per request.
  expect(data.requests.map((r) => r.sources.length)).toEqual([2, 3, 2])
  expect(data.requests[2]?.header).toBe(at('request/header', 1))
})

it('lays turns and steps out with request numbers, tool calls and summed usage', () => {
  const data = buildViewData({ file: 's.jsonl', events })
  expect(
    data.turns.map((t) => ({
      turn: t.turn,
      end: t.endReason,
      usage: t.usage,
      steps: t.steps.map((s) => ({
        step: s.step,
        requests: s.requests,
        tools: s.tools.map((x) => `${x.callId}:${x.name}=${x.resultText}`),
      })),
    })),
  ).toEqual([
    {
      turn: 1,
      end: 'completed',
      usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 40 },
      steps: [
        { step: 1, requests: [0], tools: ['c1:read=alpha', 'c2:read=beta'] },
        { step: 2, requests: [1], tools: [] },
      ],
    },
    {
      turn: 2,
      end: 'completed',
      usage: { inputTokens: 0, outputTokens: 0 },
      steps: [{ step: 1, requests: [2], tools: [] }],
    },
  ])
  expect(data.violations).toEqual([])
  expect(data.inbox.map((i) => events[i]?.type)).toEqual(Array(data.inbox.length).fill('agent/inbox/spliced'))
  expect(data.inbox.length).toBe(4)
})

it('a message that differs only in its id is kept; a changed earlier message is a cache break', () => {
  const base = { provider: 'p', model: 'm', system: 's' }
  const hello = {
    id: 'm1',
    role: 'user',
    content: [{ type: 'text', text: 'hello' }],
    source: { kind: 'user' },
  }
  const previous = { ...base, messages: [hello] } as unknown as LlmRequest
  const renamed = { ...base, messages: [{ ...hello, id: 'm2' }, hello] } as unknown as LlmRequest
  expect(diffRequests(previous, renamed, 0)).toMatchObject({
    kept: 1,
    removed: 0,
    added: 1,
    cacheBreak: false,
  })
  const edited = {
    ...base,
    messages: [{ ...hello, content: [{ type: 'text', text: 'hello!' }] }],
  } as unknown as LlmRequest
  expect(diffRequests(previous, edited, 0)).toMatchObject({ kept: 0, removed: 1, added: 1, cacheBreak: true })
})

it('after a resume the recomposed prefix (fresh ids) keeps the cache, and each message still resolves to what was sent', async () => {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter('test', scriptedAdapter([textResponse('one'), textResponse('two')]))
  app.on('agent/session-prefix', async (_input, next) => [
    userText('House rules.', { kind: 'plugin', plugin: 'rules' }),
    ...(await next()),
  ])
  const first = await app.agentLoop.create({ provider: 'test', model: 'm', sessionId: SessionId('resumed') })
  first.send(userText('a'))
  await first.whenIdle()
  await first.dispose()
  const second = await app.agentLoop.resume(SessionId('resumed'), { provider: 'test', model: 'm' })
  second.send(userText('b'))
  await second.whenIdle()
  const log = second.session.events
  await second.dispose()

  const data = buildViewData({ file: 'resumed.jsonl', events: log })
  const rebuilt = reconstructRequests(log)
  expect(data.requests[1]?.diff).toMatchObject({ kept: 2, removed: 0, added: 2, cacheBreak: false })
  expect(data.requests[1]?.shared).toBe(0)
  for (const request of data.requests) {
    expect(requestMessages(log, data.requests, request.number).map((m) => m.message)).toEqual(
      rebuilt[request.number]?.messages,
    )
  }
  const headers = log.flatMap((e, i) => (e.type === 'request/header' ? [i] : []))
  expect(requestMessages(log, data.requests, 1)[0]?.source).toEqual({
    kind: 'event',
    index: headers[1],
    prefixIndex: 0,
  })
})
