/**
 * Model output the loop must not trust: lone surrogates, surrogate pairs split across deltas,
 * duplicate tool-call ids, impossible usage numbers, streams cut short.
 */
import type { AgentWarning } from 'dsh-agent-loop'
import {
  type AssistantMessage,
  type CallId,
  type LlmRequest,
  type StreamChunk,
  type ToolCallBlock,
  type ToolResultMessage,
  userText,
} from 'dsh-llm'
import {
  hangUntilAborted,
  textBlockChunks,
  textResponse,
  toolCallChunks,
  toolCallResponse,
  toolCallsResponse,
} from 'dsh-llm/testing'
import type { Session } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { createHarness, dataOf, echoTool, lastTurnEnd, whenLogged } from './harness.ts'

const LONE_HIGH = '\uD83D'
const LONE_LOW = '\uDE00'
const GRIN = '\uD83D\uDE00'

function isWellFormedText(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed()
}

/** Every string anywhere in `value` is well-formed UTF-16. */
function allWellFormed(value: unknown): boolean {
  if (typeof value === 'string') return isWellFormedText(value)
  if (value === null || typeof value !== 'object') return true
  return Object.entries(value).every(([key, member]) => isWellFormedText(key) && allWellFormed(member))
}

function deltaText(session: Session): string {
  return dataOf<{ chunk: StreamChunk }>(session, 'assistant/chunk')
    .map(({ chunk }) => (chunk.type === 'text-delta' ? chunk.text : ''))
    .join('')
}

function answers(session: Session): AssistantMessage[] {
  return dataOf<{ message: AssistantMessage }>(session, 'assistant/message').map(({ message }) => message)
}

function resultIds(session: Session): string[] {
  return dataOf<{ message: ToolResultMessage }>(session, 'tool/result').map(
    ({ message }) => message.content[0].toolCallId,
  )
}

function textChunks(pieces: readonly string[], whole: string): StreamChunk[] {
  return [
    { type: 'block-start', index: 0, blockType: 'text' },
    ...pieces.map((text) => ({ type: 'text-delta', index: 0, text }) as const),
    { type: 'block-end', index: 0, block: { type: 'text', text: whole } },
    { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
    { type: 'finish', reason: { kind: 'stop' } },
  ]
}

describe('unicode at the log boundary (issue 13 item 3)', () => {
  it('lone surrogates in deltas become U+FFFD in the chunk events and the message alike', async () => {
    const h = await createHarness([
      textChunks([`a${LONE_LOW}b`, `c${LONE_HIGH}`, 'd'], `a${LONE_LOW}bc${LONE_HIGH}d`),
      textResponse('ok'),
    ])
    const agent = await h.run('hi')
    agent.send(userText('again'))
    await agent.whenIdle()
    const [first] = answers(agent.session)
    expect(first?.content).toEqual([{ type: 'text', text: 'a\uFFFDbc\uFFFDd' }])
    expect(deltaText(agent.session).startsWith('a\uFFFDbc\uFFFDd')).toBe(true)
    expect(allWellFormed(agent.session.events)).toBe(true)
    expect(allWellFormed(h.model.requests[1]?.messages)).toBe(true)
  })

  it('a surrogate pair split across two deltas assembles into the right character', async () => {
    const h = await createHarness([textChunks([`x${LONE_HIGH}`, `${LONE_LOW}y`], `x${GRIN}y`)])
    const agent = await h.run('hi')
    expect(answers(agent.session)[0]?.content).toEqual([{ type: 'text', text: `x${GRIN}y` }])
    expect(deltaText(agent.session)).toBe(`x${GRIN}y`)
    expect(allWellFormed(agent.session.events)).toBe(true)
  })

  it('a split pair is also joined when the stream has no block-end', async () => {
    const h = await createHarness([
      [
        { type: 'block-start', index: 0, blockType: 'text' },
        { type: 'text-delta', index: 0, text: `x${LONE_HIGH}` },
        { type: 'text-delta', index: 0, text: `${LONE_LOW}y` },
        { type: 'finish', reason: { kind: 'stop' } },
      ],
    ])
    const agent = await h.run('hi')
    expect(answers(agent.session)[0]?.content).toEqual([{ type: 'text', text: `x${GRIN}y` }])
  })

  it('lone surrogates in tool arguments, tool results and send/inject content never reach the log', async () => {
    const h = await createHarness([
      // Raw, not JSON.stringify-ed: that would escape the surrogate as the six characters \ud83d.
      toolCallResponse('c1', 'echo', `{"text":"q${LONE_HIGH}"}`),
      textResponse('done'),
    ])
    echoTool(h, (text) => `${text}${LONE_LOW}`)
    const agent = await h.create()
    agent.inject(userText(`ctx${LONE_LOW}`))
    agent.send(userText(`go${LONE_HIGH}`))
    await agent.whenIdle()
    expect(allWellFormed(agent.session.events)).toBe(true)
    for (const request of h.model.requests) expect(allWellFormed(request.messages)).toBe(true)
    expect(dataOf<{ arguments: string }>(agent.session, 'tool/call')[0]?.arguments).toBe('{"text":"q\uFFFD"}')
  })

  it('a lone surrogate escaped in the argument JSON reaches the tool as U+FFFD, keys included', async () => {
    const h = await createHarness([
      // Escaped: the JSON text is well-formed; JSON.parse would hand the tool a lone surrogate.
      toolCallResponse('c1', 'echo', '{"text":"q\\ud83d","\\udc00extra":1}'),
      textResponse('done'),
    ])
    const received: unknown[] = []
    h.app.tools.register({
      name: 'echo',
      description: 'echoes',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: true },
      execute: (args) => {
        received.push(args)
        return 'ok'
      },
    })
    const agent = await h.run('go')
    expect(received).toEqual([{ text: 'q\uFFFD', '\uFFFDextra': 1 }])
    expect(allWellFormed(received)).toBe(true)
    // The logged call keeps the model's text as it was (well-formed JSON); only the parsed value is repaired.
    expect(dataOf<{ arguments: string }>(agent.session, 'tool/call')[0]?.arguments).toBe(
      '{"text":"q\\ud83d","\\udc00extra":1}',
    )
  })
})

describe('duplicate tool-call ids (issue 13 item 2)', () => {
  it('a repeated id within one message is renamed <id>~2; each call runs once and is answered once', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'echo', args: { text: 'one' } },
        { id: 'c1', name: 'echo', args: { text: 'two' } },
      ]),
      textResponse('done'),
    ])
    const ran: string[] = []
    echoTool(h, (text) => {
      ran.push(text)
      return text
    })
    const agent = await h.run('go')
    expect(ran).toEqual(['one', 'two'])
    expect(resultIds(agent.session)).toEqual(['c1', 'c1~2'])
    const calls = answers(agent.session)[0]?.content.filter((block) => block.type === 'tool-call')
    expect(calls?.map((block) => (block.type === 'tool-call' ? block.id : ''))).toEqual(['c1', 'c1~2'])
    // The chunk events carry the renamed id too, so the message is what its chunks assemble to.
    const deltaIds = dataOf<{ chunk: StreamChunk }>(agent.session, 'assistant/chunk').flatMap(({ chunk }) =>
      chunk.type === 'tool-call-delta' && chunk.id !== undefined ? [chunk.id] : [],
    )
    expect(deltaIds).toEqual(['c1', 'c1~2'])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
  })

  it('an id already answered earlier in the session is renamed as well', async () => {
    const h = await createHarness([
      toolCallResponse('c1', 'echo', { text: 'one' }),
      toolCallResponse('c1', 'echo', { text: 'two' }),
      textResponse('done'),
    ])
    echoTool(h)
    const agent = await h.run('go')
    expect(resultIds(agent.session)).toEqual(['c1', 'c1~2'])
    const last = h.model.requests[2]
    const ids = (last?.messages ?? []).flatMap((message) =>
      message.content.flatMap((block) =>
        block.type === 'tool-call'
          ? [block.id]
          : block.type === 'tool-result'
            ? [`r:${block.toolCallId}`]
            : [],
      ),
    )
    expect(ids).toEqual(['c1', 'r:c1', 'c1~2', 'r:c1~2'])
  })

  it('a provider that reuses one id every step gets <id>, <id>~2, <id>~3', async () => {
    const h = await createHarness([
      toolCallResponse('call_0', 'echo', { text: 'one' }),
      toolCallResponse('call_0', 'echo', { text: 'two' }),
      toolCallResponse('call_0', 'echo', { text: 'three' }),
      textResponse('done'),
    ])
    echoTool(h)
    const agent = await h.run('go')
    expect(resultIds(agent.session)).toEqual(['call_0', 'call_0~2', 'call_0~3'])
  })

  it('calls without an id get distinct ids across steps', async () => {
    const noId = (text: string): StreamChunk[] => [
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, name: 'echo', argumentsDelta: JSON.stringify({ text }) },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ]
    const h = await createHarness([noId('one'), noId('two'), textResponse('done')])
    echoTool(h)
    const agent = await h.run('go')
    const ids = resultIds(agent.session)
    expect(ids).toHaveLength(2)
    expect(new Set(ids).size).toBe(2)
  })
})

describe('tool calls whose block-end carries no id (issue 31 item 5)', () => {
  /** One tool call at `index` whose deltas and block-end carry `id` (absent when undefined). */
  function callChunks(index: number, id: string | undefined, text: string, deltaId = id): StreamChunk[] {
    const args = JSON.stringify({ text })
    const delta = { type: 'tool-call-delta', index, name: 'echo', argumentsDelta: args } as const
    const block = { type: 'tool-call', name: 'echo', arguments: args } as const
    return [
      { type: 'block-start', index, blockType: 'tool-call' },
      deltaId === undefined ? delta : { ...delta, id: deltaId as CallId },
      { type: 'block-end', index, block: (id === undefined ? block : { ...block, id }) as ToolCallBlock },
    ]
  }
  const finish: StreamChunk = { type: 'finish', reason: { kind: 'tool-calls' } }

  for (const [label, id] of [
    ['no id', undefined],
    ['an empty id', ''],
  ] as const) {
    it(`a block-end with ${label} gets dsh-call-<index> on the call, its chunks and its result`, async () => {
      const h = await createHarness([
        [...callChunks(0, id, 'one'), ...callChunks(1, id, 'two'), finish],
        textResponse('done'),
      ])
      echoTool(h)
      const agent = await h.run('go')
      expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
      expect(resultIds(agent.session)).toEqual(['dsh-call-0', 'dsh-call-1'])
      const calls = answers(agent.session)[0]?.content.flatMap((block) =>
        block.type === 'tool-call' ? [block.id] : [],
      )
      expect(calls).toEqual(['dsh-call-0', 'dsh-call-1'])
      const ends = dataOf<{ chunk: StreamChunk }>(agent.session, 'assistant/chunk').flatMap(({ chunk }) =>
        chunk.type === 'block-end' && chunk.block.type === 'tool-call' ? [chunk.block.id] : [],
      )
      expect(ends).toEqual(['dsh-call-0', 'dsh-call-1'])
    })
  }

  it('a block-end with no id after deltas that had one keeps the deltas’ id', async () => {
    const h = await createHarness([[...callChunks(0, undefined, 'one', 'c7'), finish], textResponse('done')])
    echoTool(h)
    const agent = await h.run('go')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(resultIds(agent.session)).toEqual(['c7'])
  })

  it('a block-end with no id for a dsh-call-<index> id taken earlier in the session is renamed ~2', async () => {
    const h = await createHarness([
      [...callChunks(0, undefined, 'one'), finish],
      [...callChunks(0, '', 'two'), finish],
      textResponse('done'),
    ])
    echoTool(h)
    const agent = await h.run('go')
    expect(resultIds(agent.session)).toEqual(['dsh-call-0', 'dsh-call-0~2'])
  })
})

describe('provider usage numbers (issue 13 item 8)', () => {
  it('negative, missing and non-finite usage numbers are clamped or dropped with a warning; the turn completes', async () => {
    const chunks: StreamChunk[] = [
      ...textBlockChunks(0, 'hi'),
      {
        type: 'usage',
        usage: {
          inputTokens: -5,
          outputTokens: Number.NaN,
          cacheReadTokens: Number.POSITIVE_INFINITY,
          reasoningTokens: 3,
        },
      },
      { type: 'finish', reason: { kind: 'stop' } },
    ]
    const h = await createHarness([chunks])
    const warnings: AgentWarning[] = []
    h.app.on('agent/warning', (_agent, warning) => {
      warnings.push(warning)
    })
    const agent = await h.run('go')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    const [data] = dataOf<{ usage?: unknown }>(agent.session, 'assistant/message')
    expect(data?.usage).toEqual({ inputTokens: 0, outputTokens: 0, reasoningTokens: 3 })
    expect(warnings).toEqual([
      {
        code: 'INVALID_USAGE',
        message: expect.stringMatching(
          /^turn 1 step 1: the model reported invalid usage \(inputTokens -5 clamped to 0; outputTokens NaN set to 0; cacheReadTokens Infinity dropped\)$/,
        ),
      },
    ])
  })

  it('a usage chunk that is not an object becomes zero usage with a warning', async () => {
    const chunks = [
      ...textBlockChunks(0, 'hi'),
      { type: 'usage', usage: null },
      { type: 'finish', reason: { kind: 'stop' } },
    ] as unknown as StreamChunk[]
    const h = await createHarness([chunks])
    const agent = await h.run('go')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(dataOf<{ usage?: unknown }>(agent.session, 'assistant/message')[0]?.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
    })
  })

  it('a failure with a non-finite retryAfterMs or status is logged without them and retried by the policy', async () => {
    const h = await createHarness([
      [
        {
          type: 'finish',
          reason: {
            kind: 'error',
            failure: {
              code: 'RATE_LIMIT',
              message: 'slow down',
              retryAfterMs: Number.POSITIVE_INFINITY,
              status: Number.NaN,
            },
          },
        },
      ],
      textResponse('recovered'),
    ])
    const agent = await h.run('go', { retry: { initialDelayMs: 0 } })
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    const finishes = dataOf<{ chunk: StreamChunk }>(agent.session, 'assistant/chunk').filter(
      ({ chunk }) => chunk.type === 'finish',
    )
    expect(finishes[0]?.chunk).toEqual({
      type: 'finish',
      reason: { kind: 'error', failure: { code: 'RATE_LIMIT', message: 'slow down' } },
    })
  })
})

describe('interrupted messages keep what was paid for (issue 13 item 9)', () => {
  it('a cancelled stream keeps the usage received so far on its interrupted message', async () => {
    const partial: StreamChunk[] = [
      ...textBlockChunks(0, 'The answer is').slice(0, 2),
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 3 } },
    ]
    const h = await createHarness([hangUntilAborted(partial)])
    const agent = await h.create()
    agent.send(userText('q'))
    await whenLogged(
      h.app,
      agent.session,
      (event) => event.type === 'assistant/chunk' && event.data.chunk.type === 'usage',
    )
    agent.cancel()
    await agent.whenIdle()
    const [data] = dataOf<{ usage?: unknown; interrupted?: boolean }>(agent.session, 'assistant/message')
    expect(data).toMatchObject({ interrupted: true, usage: { inputTokens: 12, outputTokens: 3 } })
  })
})

describe('streams that end wrong (issue 13 item 5, the loop side)', () => {
  it('a transport failure after half a tool call is retried; the half call never reaches a message', async () => {
    const half = toolCallChunks(0, { id: 'c1', name: 'echo', args: { text: 'abc' } }).slice(0, 2)
    const h = await createHarness([
      [
        ...half,
        {
          type: 'finish',
          reason: { kind: 'error', failure: { code: 'TRANSPORT', message: 'stream ended without [DONE]' } },
        },
      ],
      textResponse('recovered'),
    ])
    echoTool(h)
    const agent = await h.run('go', { retry: { initialDelayMs: 0 } })
    expect(answers(agent.session).map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'recovered' }],
    ])
    expect(dataOf(agent.session, 'tool/call')).toEqual([])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(h.model.callCount).toBe(2)
  })

  it('an llm/stream listener that throws is named (its plugin) in the error and the log', async () => {
    const h = await createHarness([textResponse('hi')])
    await h.app.plugin({
      name: 'flaky-middleware',
      apply: (ctx) => {
        ctx.on('llm/stream', (_request: LlmRequest, next) => {
          const inner = next()
          return (async function* () {
            for await (const chunk of inner) {
              if (chunk.type === 'finish') throw new Error('middleware broke')
              yield chunk
            }
          })()
        })
      },
    })
    const agent = await h.run('go')
    const reason = lastTurnEnd(agent.session) as { kind: string; failure: { code: string; message: string } }
    expect(reason.kind).toBe('error')
    expect(reason.failure.code).toBe('STREAM_LISTENER_FAILED')
    expect(reason.failure.message).toBe(
      'llm/stream listener of plugin "flaky-middleware" threw: middleware broke',
    )
    expect(h.errors.map((error) => [error.code, error.message])).toEqual([
      ['STREAM_LISTENER_FAILED', 'llm/stream listener of plugin "flaky-middleware" threw: middleware broke'],
    ])
  })

  it('an llm/stream listener that throws synchronously is named as well', async () => {
    const h = await createHarness([textResponse('hi')])
    await h.app.plugin({
      name: 'eager-middleware',
      apply: (ctx) => {
        ctx.on('llm/stream', () => {
          throw new TypeError('no stream for you')
        })
      },
    })
    const agent = await h.run('go')
    const reason = lastTurnEnd(agent.session) as { failure: { code: string; message: string } }
    expect(reason.failure).toEqual({
      code: 'STREAM_LISTENER_FAILED',
      message: 'llm/stream listener of plugin "eager-middleware" threw: no stream for you',
    })
  })
})
