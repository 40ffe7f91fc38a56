import { checkSessionLog } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { LlmErrorCode, userText } from 'dsh-llm'
import { errorResponse, textResponse, toolCallResponse } from 'dsh-llm/testing'
import type { SessionEvent } from 'dsh-session'
import { describe, expect, test, vi } from 'vitest'
import { compactingApp, readingBehaviour, windowModel } from './support.ts'

installInvariantGuard()

/** The compaction and retry events of a log, as `[type, detail]` pairs. */
function compactionTrail(events: readonly SessionEvent[]): unknown[] {
  return events.flatMap((event): unknown[][] => {
    switch (event.type) {
      case 'compaction/start':
        return [[event.type, event.data.trigger, event.data.strategy, event.data.turn, event.data.step]]
      case 'compaction/end':
        return [[event.type, event.data.outcome]]
      case 'request/retry':
        return [[event.type, event.data.turn, event.data.step, event.data.failure.code]]
      case 'turn/end':
        return [[event.type, event.data.reason.kind]]
      default:
        return []
    }
  })
}

describe('overflow', () => {
  test('CONTEXT_WINDOW_EXCEEDED compacts and the retried step succeeds in the same turn', async () => {
    // The provider counts differently from the plugin: it refuses any request of more than 20
    // messages, which the plugin's estimate (far below the threshold) cannot foresee.
    const app = await compactingApp({
      compaction: { contextWindows: { small: 16_000 }, threshold: 1, keepTokens: 400 },
      resultChars: () => 400,
    })
    const reading = readingBehaviour(12)
    let refused = 0
    const { adapter } = windowModel(16_000, (request, n) => {
      if (request.messages.length <= 20) return reading(request, n - refused)
      refused++
      return errorResponse(
        LlmErrorCode.CONTEXT_WINDOW_EXCEEDED,
        `${request.messages.length} messages is too many`,
      )
    })
    app.llm.registerAdapter('test', adapter)
    const agent = await app.agentLoop.create({ provider: 'test', model: 'small' })
    const result = await agent.prompt(userText('read twelve files'))
    expect(result.text).toBe('done')
    expect(refused).toBe(1)
    const events = agent.session.events.slice()
    expect(compactionTrail(events)).toEqual([
      ['compaction/start', 'overflow', 'summarize', 1, 11],
      ['compaction/end', 'completed'],
      ['request/retry', 1, 11, LlmErrorCode.CONTEXT_WINDOW_EXCEEDED],
      ['turn/end', 'completed'],
    ])
    expect(events.filter((event) => event.type === 'turn/start')).toHaveLength(1)
    expect(checkSessionLog(events)).toEqual([])
  })

  test('a second overflow of the same step ends the turn with the error instead of compacting again', async () => {
    const app = await compactingApp({ compaction: { contextWindows: { small: 16_000 }, threshold: 0.99 } })
    const { adapter } = windowModel(16_000, (request, n) =>
      n < 3
        ? toolCallResponse(`call-${n}`, 'read', { path: `file-${n}` })
        : errorResponse(
            LlmErrorCode.CONTEXT_WINDOW_EXCEEDED,
            `still too long (${request.messages.length} messages)`,
          ),
    )
    app.llm.registerAdapter('test', adapter)
    const agent = await app.agentLoop.create({ provider: 'test', model: 'small' })
    await expect(agent.prompt(userText('read'))).rejects.toThrow(LlmErrorCode.CONTEXT_WINDOW_EXCEEDED)
    const events = agent.session.events.slice()
    expect(compactionTrail(events)).toEqual([
      ['compaction/start', 'overflow', 'prune', 1, 4],
      ['compaction/end', 'completed'],
      ['request/retry', 1, 4, LlmErrorCode.CONTEXT_WINDOW_EXCEEDED],
      ['turn/end', 'error'],
    ])
    expect(checkSessionLog(events)).toEqual([])
  })
})

describe('the summarizing request', () => {
  test('starts with the last loop request byte for byte: system, tools, session prefix, history', async () => {
    // Results of about 600 tokens: the compaction runs just past 80%, so the whole history and the
    // summary's token budget fit the window and the summarizing request can reuse the prefix.
    const app = await compactingApp({
      compaction: { contextWindows: { small: 16_000 } },
      resultChars: () => 2000,
    })
    app.on('agent/session-prefix', async (_input, next) => [
      userText('Project notes: the repository is a TypeScript monorepo.', {
        kind: 'plugin',
        plugin: 'notes',
      }),
      ...(await next()),
    ])
    const { adapter, log } = windowModel(16_000, readingBehaviour(40))
    app.llm.registerAdapter('test', adapter)
    const agent = await app.agentLoop.create({ provider: 'test', model: 'small', system: 'You read files.' })
    await agent.prompt(userText('read forty files'))
    const index = log.requests.findIndex((entry) => entry.summary)
    expect(index).toBeGreaterThan(0)
    const summary = log.requests[index]?.request
    const last = log.requests[index - 1]?.request
    if (summary === undefined || last === undefined) throw new Error('no summarizing request')
    const prefixOf = (request: typeof summary, length: number) =>
      JSON.stringify({
        provider: request.provider,
        model: request.model,
        system: request.system,
        tools: request.tools,
        messages: request.messages.slice(0, length),
      })
    expect(last.system).toBe('You read files.')
    expect(last.messages[0]?.content).toEqual([
      { type: 'text', text: 'Project notes: the repository is a TypeScript monorepo.' },
    ])
    const expected = prefixOf(last, last.messages.length)
    const actual = prefixOf(summary, last.messages.length)
    expect(actual === expected).toBe(true)
    // After the last request come its answer and the step's tool result, then the instruction.
    expect(summary.messages.length).toBe(last.messages.length + 3)
    expect(summary.messages.at(-1)?.id).toMatch(/^compaction-1:instruction$/)
  })
})

describe('the pressure check before each step', () => {
  test('folds the log incrementally: no snapshot of the whole log, no chunk entry read', async () => {
    const app = await compactingApp()
    const { adapter } = windowModel(64_000, readingBehaviour(6))
    app.llm.registerAdapter('test', adapter)
    const agent = await app.agentLoop.create({ provider: 'test', model: 'small' })
    const session = agent.session
    const read: number[] = []
    let snapshots = 0
    const eventAt = session.eventAt.bind(session)
    vi.spyOn(session, 'eventAt').mockImplementation((seq) => {
      read.push(seq)
      return eventAt(seq)
    })
    const events = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(session), 'events')?.get
    Object.defineProperty(session, 'events', {
      configurable: true,
      get: () => {
        snapshots++
        return events?.call(session)
      },
    })
    const result = await agent.prompt(userText('read six files'))
    expect(result.steps).toBe(7)
    expect(app.compaction.pressure(agent).anchored).toBe(true)
    expect(snapshots).toBe(0)
    const all = events?.call(session) as readonly SessionEvent[]
    const chunkSeqs = all.filter((event) => event.type === 'assistant/chunk').map((event) => event.seq)
    expect(chunkSeqs.length).toBeGreaterThan(30)
    expect(read.filter((seq) => chunkSeqs.includes(seq))).toEqual([])
  })
})

describe('on demand', () => {
  test('compact(agent) while idle writes one compaction between turns; the next turn reads the summary', async () => {
    const app = await compactingApp({ compaction: { contextWindows: { small: 64_000 }, keepTokens: 2000 } })
    const { adapter, log } = windowModel(64_000, (_request, n) =>
      n < 6 ? toolCallResponse(`call-${n}`, 'read', { path: `file-${n}` }) : textResponse(`answer ${n}`),
    )
    app.llm.registerAdapter('test', adapter)
    const agent = await app.agentLoop.create({ provider: 'test', model: 'small' })
    await agent.prompt(userText('read six files'))
    expect(app.compaction.compactions(agent)).toBe(0)
    const before = app.compaction.pressure(agent)
    const result = await app.compaction.compact(agent, { strategy: 'summarize' })
    expect(result).toMatchObject({ kind: 'completed', strategy: 'summarize', tokensBefore: before.tokens })
    const after = app.compaction.pressure(agent)
    expect(after.tokens).toBeLessThan(before.tokens / 2)
    expect(after.anchored).toBe(false)
    const events = agent.session.events.slice()
    const tail = events.slice(-3)
    expect(tail.map((event) => [event.type, event.surface?.op])).toEqual([
      ['compaction/start', undefined],
      ['user/message', 'replace'],
      ['compaction/end', undefined],
    ])
    await agent.prompt(userText('and now?'))
    const lastRequest = log.requests.at(-1)?.request
    expect(lastRequest?.messages[0]?.id).toBe('compaction-1:summary')
    expect(checkSessionLog(agent.session.events.slice())).toEqual([])
  })

  test('a second compaction while one is open in the log is refused with COMPACTION_OPEN', async () => {
    const app = await compactingApp()
    const { adapter } = windowModel(64_000, readingBehaviour(2))
    app.llm.registerAdapter('test', adapter)
    const agent = await app.agentLoop.create({ provider: 'test', model: 'small' })
    await agent.prompt(userText('read'))
    agent.session.append('compaction/start', {
      id: 'compaction-1',
      trigger: 'manual',
      strategy: 'summarize',
      window: 64_000,
      tokensBefore: 10,
      replaces: 1,
    })
    await expect(app.compaction.compact(agent)).rejects.toMatchObject({
      code: 'COMPACTION_OPEN',
      message: `session ${agent.session.id} has an open compaction compaction-1 (compaction/start at seq ${agent.session.seq - 1} has no compaction/end)`,
    })
  })
})
