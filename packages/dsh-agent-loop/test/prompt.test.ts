/** The promise API (`agent.prompt`), the turn stream (`agent.stream`) and unhandled `agent/error`. */
import { Context } from 'cordis'
import { AgentLoop, AgentLoopErrorCode, ToolRegistry, TurnError, type TurnResult } from 'dsh-agent-loop'
import { LlmRuntime, userText } from 'dsh-llm'
import {
  errorResponse,
  hangUntilAborted,
  scriptedAdapter,
  textResponse,
  toolCallResponse,
} from 'dsh-llm/testing'
import { Sessions } from 'dsh-session'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createHarness, echoTool } from './harness.ts'

const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } })

describe('agent.prompt', () => {
  it('reads the turn result back from the log without rebuilding a chunk event', async () => {
    const h = await createHarness([
      toolCallResponse('c1', 'echo', { text: 'x' }, usage(10, 2)),
      textResponse('done', usage(15, 3)),
    ])
    echoTool(h)
    const agent = await h.create()
    const session = agent.session
    const read: number[] = []
    const eventAt = session.eventAt.bind(session)
    vi.spyOn(session, 'eventAt').mockImplementation((seq) => {
      read.push(seq)
      return eventAt(seq)
    })
    const result = await agent.prompt('go')
    expect(result).toMatchObject({ text: 'done', steps: 2, usage: { inputTokens: 25, outputTokens: 5 } })
    const chunkSeqs = session.events
      .filter((event) => event.type === 'assistant/chunk')
      .map((event) => event.seq)
    expect(chunkSeqs.length).toBeGreaterThan(10)
    expect(read.filter((seq) => chunkSeqs.includes(seq))).toEqual([])
  })

  it('resolves with the final message, summed usage, stop reason and step count', async () => {
    const h = await createHarness([
      toolCallResponse('c1', 'echo', { text: 'x' }, usage(10, 2)),
      textResponse('done', usage(15, 3)),
    ])
    echoTool(h)
    const agent = await h.create()
    const result: TurnResult = await agent.prompt('go')
    expect(result.turn).toBe(1)
    expect(result.text).toBe('done')
    expect(result.message?.role).toBe('assistant')
    expect(result.usage).toEqual({ inputTokens: 25, outputTokens: 5 })
    expect(result.stopReason).toEqual({ kind: 'completed' })
    expect(result.steps).toBe(2)
    expect(result.sessionId).toBe(agent.session.id)
  })

  it('accepts a UserMessage and resolves the queued prompt with its own turn', async () => {
    const h = await createHarness([textResponse('first'), textResponse('second')])
    const agent = await h.create()
    const first = agent.prompt('one')
    const second = agent.prompt(userText('two'))
    const [a, b] = await Promise.all([first, second])
    expect([a.turn, a.text]).toEqual([1, 'first'])
    expect([b.turn, b.text]).toEqual([2, 'second'])
  })

  it('rejects with TurnError TURN_FAILED carrying the provider failure when the turn fails', async () => {
    const h = await createHarness([errorResponse('AUTH', 'bad key')])
    const agent = await h.create({ retry: { maxAttempts: 1 } })
    const error = await agent.prompt('go').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TurnError)
    const turnError = error as TurnError
    expect(turnError.code).toBe(AgentLoopErrorCode.TURN_FAILED)
    expect(turnError.message).toBe(`turn 1 of session ${agent.session.id} failed: AUTH: bad key`)
    expect(turnError.result?.stopReason).toMatchObject({ kind: 'error', failure: { code: 'AUTH' } })
    expect(turnError.result?.steps).toBe(1)
    await agent.whenIdle() // keeps its meaning: resolves although the turn failed
  })

  it('rejects with TURN_CANCELLED when the turn is cancelled', async () => {
    const h = await createHarness([hangUntilAborted()])
    const agent = await h.create()
    const pending = agent.prompt('go')
    agent.cancel('user pressed stop')
    const error = (await pending.catch((e: unknown) => e)) as TurnError
    expect(error).toBeInstanceOf(TurnError)
    expect(error.code).toBe(AgentLoopErrorCode.TURN_CANCELLED)
    expect(error.message).toBe(`turn 1 of session ${agent.session.id} was cancelled: user pressed stop`)
    expect(error.result?.stopReason).toEqual({ kind: 'aborted', cause: 'user pressed stop' })
  })

  it('rejects a queued prompt that cancel discards before its turn opens', async () => {
    const h = await createHarness([hangUntilAborted()])
    const agent = await h.create()
    const running = agent.prompt('first')
    const queued = agent.prompt('second')
    agent.cancel('stop')
    const errors = await Promise.all(
      [running, queued].map((p) =>
        p.then(
          () => undefined,
          (e: unknown) => e as TurnError,
        ),
      ),
    )
    expect(errors.map((e) => e?.code)).toEqual([
      AgentLoopErrorCode.TURN_CANCELLED,
      AgentLoopErrorCode.TURN_CANCELLED,
    ])
    expect(errors[1]?.message).toMatch(
      /^prompt message \S+ was discarded from the inbox of session \S+ before its turn/,
    )
  })

  it('rejects with STEP_LIMIT when the turn reaches maxSteps', async () => {
    const h = await createHarness([
      toolCallResponse('c1', 'echo', { text: 'a' }),
      toolCallResponse('c2', 'echo', { text: 'b' }),
    ])
    echoTool(h)
    const agent = await h.create({ maxSteps: 2 })
    const error = (await agent.prompt('loop').catch((e: unknown) => e)) as TurnError
    expect(error.code).toBe(AgentLoopErrorCode.STEP_LIMIT)
    expect(error.message).toBe(`turn 1 of session ${agent.session.id} stopped at the step limit of 2`)
    expect(error.result?.steps).toBe(2)
  })

  it('rejects with AGENT_DISPOSED a prompt still queued when the agent is disposed, and after', async () => {
    const h = await createHarness([hangUntilAborted()])
    const agent = await h.create()
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e as TurnError,
      )
    const running = failure(agent.prompt('first'))
    const queued = failure(agent.prompt('second'))
    await agent.dispose()
    expect((await running)?.code).toBe(AgentLoopErrorCode.TURN_CANCELLED)
    const error = await queued
    expect(error?.code).toBe(AgentLoopErrorCode.AGENT_DISPOSED)
    expect(error?.message).toBe(
      `agent ${agent.id} was disposed before the prompted turn ran (session ${agent.session.id})`,
    )
    await expect(agent.prompt('late')).rejects.toMatchObject({ code: AgentLoopErrorCode.AGENT_DISPOSED })
  })
})

describe('agent.stream', () => {
  it('yields the turn events from turn/start to turn/end and resolves result', async () => {
    const h = await createHarness([textResponse('hi there', { deltas: ['hi', ' there'] })])
    const agent = await h.create()
    const seen: string[] = []
    const deltas: string[] = []
    const turn = agent.stream('hello')
    for await (const event of turn) {
      seen.push(event.type)
      if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') {
        deltas.push(event.data.chunk.text)
      }
    }
    expect(deltas).toEqual(['hi', ' there'])
    expect(seen[0]).toBe('turn/start')
    expect(seen.at(-1)).toBe('turn/end')
    expect(seen.filter((type) => type !== 'assistant/chunk')).toEqual([
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect((await turn.result).text).toBe('hi there')
  })

  it('skips the events of an earlier turn it was queued behind', async () => {
    const h = await createHarness([textResponse('one'), textResponse('two')])
    const agent = await h.create()
    agent.send(userText('first'))
    const turns: number[] = []
    for await (const event of agent.stream('second')) {
      if (event.type === 'turn/start') turns.push(event.data.turn)
    }
    expect(turns).toEqual([2])
  })

  it('throws the TurnError after yielding turn/end when the turn fails', async () => {
    const h = await createHarness([errorResponse('SERVER', 'down')])
    const agent = await h.create({ retry: { maxAttempts: 1 } })
    const seen: string[] = []
    const turn = agent.stream('go')
    const error = await (async () => {
      for await (const event of turn) seen.push(event.type)
    })().catch((e: unknown) => e)
    expect(seen.at(-1)).toBe('turn/end')
    expect(error).toBeInstanceOf(TurnError)
    expect((error as TurnError).code).toBe(AgentLoopErrorCode.TURN_FAILED)
    await expect(turn.result).rejects.toBe(error)
  })

  it('stops listening when the consumer breaks out early', async () => {
    const h = await createHarness([textResponse('hi')])
    const agent = await h.create()
    const turn = agent.stream('go')
    for await (const event of turn) {
      if (event.type === 'turn/start') break
    }
    expect((await turn.result).text).toBe('hi')
  })
})

describe('an agent/error nobody listens to', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  async function bareApp(script: Parameters<typeof scriptedAdapter>[0]) {
    const app = new Context()
    await app.plugin(LlmRuntime)
    await app.plugin(Sessions)
    await app.plugin(ToolRegistry)
    await app.plugin(AgentLoop)
    app.llm.registerAdapter('test', scriptedAdapter(script))
    return app
  }

  it('is written once to stderr when the turn was started with send', async () => {
    const written: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    const app = await bareApp([errorResponse('AUTH', 'bad key')])
    const agent = await app.agentLoop.create({ provider: 'test', model: 'm', retry: { maxAttempts: 1 } })
    agent.send(userText('go'))
    await agent.whenIdle()
    expect(written).toEqual([
      `dsh: agent ${agent.id} (session ${agent.session.id}): unhandled agent/error AUTH: bad key\n`,
    ])
  })

  it('is not written when a prompt() caller receives it as the rejection', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    const app = await bareApp([errorResponse('AUTH', 'bad key')])
    const agent = await app.agentLoop.create({ provider: 'test', model: 'm', retry: { maxAttempts: 1 } })
    const error = (await agent.prompt('go').catch((e: unknown) => e)) as TurnError
    expect(error.code).toBe(AgentLoopErrorCode.TURN_FAILED)
    expect(error.cause).toMatchObject({ code: 'AUTH' })
    expect(write).not.toHaveBeenCalled()
  })
})
