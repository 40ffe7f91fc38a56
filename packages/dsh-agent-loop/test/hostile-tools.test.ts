/**
 * Tools that misbehave: output that is not JSON, bodies that throw oddly or never settle, bodies
 * that ignore their abort signal, and arguments the model garbled. Each ends in a defined result.
 */
import { textResponse, toolCallResponse, toolCallsResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHarness, echoTool, gate, lastTurnEnd, outline, toolResults } from './harness.ts'

/** The tool results as call id, text and error code. */
function results(session: Parameters<typeof toolResults>[0]) {
  return toolResults(session).map(({ id, text, code }) => ({ id, text, code }))
}

/** A tool `bad` whose body returns `value`, and `good` answering `fine`. */
async function returning(value: () => unknown) {
  const h = await createHarness([
    toolCallsResponse([
      { id: 'c1', name: 'bad', args: {} },
      { id: 'c2', name: 'good', args: {} },
    ]),
    textResponse('done'),
  ])
  h.app.tools.register({
    name: 'bad',
    description: 'bad',
    parameters: z.object({}),
    execute: () => value() as string,
  })
  h.app.tools.register({ name: 'good', description: 'good', parameters: z.object({}), execute: () => 'fine' })
  return h
}

describe('tool output that is not JSON (issue 13 item 1)', () => {
  const cyclic = () => {
    const block: Record<string, unknown> = { type: 'text', text: 'x' }
    block.self = block
    return [block]
  }
  const cases: [string, () => unknown, string][] = [
    ['a BigInt', () => [{ type: 'text', text: 10n }], 'content[0].text is a BigInt'],
    ['a bare BigInt', () => 10n, 'returned a BigInt, not a tool result'],
    ['a function', () => [{ type: 'text', text: 'x', f: () => 1 }], 'content[0].f is a function'],
    ['a symbol', () => [{ type: 'text', text: Symbol('s') }], 'content[0].text is a symbol'],
    ['undefined at the top level', () => undefined, 'returned undefined, not a tool result'],
    ['a cycle', cyclic, 'content[0].self is a cycle'],
    [
      'a value whose toJSON throws',
      () => [
        {
          type: 'text',
          text: 'x',
          extra: {
            toJSON: () => {
              throw new Error('boom')
            },
          },
        },
      ],
      'content[0].extra.toJSON is a function',
    ],
    [
      'a cyclic bare object',
      () => {
        const o: Record<string, unknown> = {}
        o.o = o
        return o
      },
      'returned an object, not a tool result',
    ],
    ['a block that is not a content block', () => [{ type: 'text' }], 'content[0]'],
  ]
  for (const [what, value, problem] of cases) {
    it(`${what} becomes an error result naming the tool; the sibling still runs, in model order`, async () => {
      const h = await returning(value)
      const agent = await h.run('go')
      expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
      const [bad, good] = results(agent.session)
      expect(bad?.id).toBe('c1')
      expect(bad?.code).toBe('INVALID_TOOL_RESULT')
      expect(bad?.text).toContain('tool "bad" (call c1)')
      expect(bad?.text).toContain(problem)
      expect(good).toEqual({ id: 'c2', text: 'fine', code: undefined })
      // The next request answers both calls.
      expect(h.model.requests).toHaveLength(2)
      expect(h.errors).toEqual([])
    })
  }
})

describe('a block of a type no schema knows (docs/tools.md)', () => {
  it('is logged as it is, as a success: the content-block vocabulary is open', async () => {
    const h = await returning(() => [{ type: 'image', url: 'https://example.test/a.png' }])
    const agent = await h.run('go')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    const logged = agent.session.events.flatMap((event) =>
      event.type === 'tool/result' && event.data.message.source.callId === 'c1'
        ? [{ content: event.data.message.content[0].content, error: event.data.error }]
        : [],
    )
    expect(logged).toEqual([
      { content: [{ type: 'image', url: 'https://example.test/a.png' }], error: undefined },
    ])
    expect(h.errors).toEqual([])
  })
})

describe('tools that throw oddly or never settle (issue 13 item 4)', () => {
  it('a synchronous throw, a non-Error rejection and an unprintable rejection each become TOOL_THREW', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'sync', args: {} },
        { id: 'c2', name: 'str', args: {} },
        { id: 'c3', name: 'odd', args: {} },
      ]),
      textResponse('done'),
    ])
    const p = z.object({})
    h.app.tools.register({
      name: 'sync',
      description: 's',
      parameters: p,
      execute: () => {
        throw new Error('sync boom')
      },
    })
    h.app.tools.register({
      name: 'str',
      description: 's',
      parameters: p,
      execute: () => Promise.reject('plain string'),
    })
    h.app.tools.register({
      name: 'odd',
      description: 's',
      parameters: p,
      execute: () => Promise.reject(Object.create(null)),
    })
    const agent = await h.run('go')
    expect(results(agent.session)).toEqual([
      { id: 'c1', text: 'tool "sync" (call c1) threw: sync boom', code: 'TOOL_THREW' },
      { id: 'c2', text: 'tool "str" (call c2) threw: plain string', code: 'TOOL_THREW' },
      { id: 'c3', text: 'tool "odd" (call c3) threw: {}', code: 'TOOL_THREW' },
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
  })

  it('a tool that never settles times out after its own timeoutMs; its signal aborts', async () => {
    const h = await createHarness([toolCallResponse('c1', 'hang', {}), textResponse('done')])
    let seen: AbortSignal | undefined
    h.app.tools.register({
      name: 'hang',
      description: 'h',
      parameters: z.object({}),
      timeoutMs: 20,
      execute: (_args, { signal }) => {
        seen = signal
        return new Promise<string>(() => undefined)
      },
    })
    const agent = await h.run('go')
    expect(results(agent.session)).toEqual([
      { id: 'c1', text: 'tool "hang" (call c1) timed out after 20 ms', code: 'TOOL_TIMEOUT' },
    ])
    expect(seen?.aborted).toBe(true)
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
  })

  it('the plugin default toolTimeoutMs applies to tools without their own', async () => {
    const h = await createHarness([toolCallResponse('c1', 'hang', {}), textResponse('done')], {
      config: { toolTimeoutMs: 15 },
    })
    h.app.tools.register({
      name: 'hang',
      description: 'h',
      parameters: z.object({}),
      execute: () => new Promise<string>(() => undefined),
    })
    const agent = await h.run('go')
    expect(results(agent.session)).toEqual([
      { id: 'c1', text: 'tool "hang" (call c1) timed out after 15 ms', code: 'TOOL_TIMEOUT' },
    ])
  })

  it('cancel abandons a tool that ignores its signal after the grace period; its late result is dropped', async () => {
    const h = await createHarness([toolCallResponse('c1', 'deaf', {})], { config: { abortGraceMs: 20 } })
    const started = gate()
    const late = gate<string>()
    h.app.tools.register({
      name: 'deaf',
      description: 'ignores its signal',
      parameters: z.object({}),
      execute: () => {
        started.open()
        return late.promise
      },
    })
    const agent = await h.create()
    agent.send(userTextMessage('go'))
    await started.promise
    const before = Date.now()
    agent.cancel('stop')
    await agent.whenIdle()
    expect(Date.now() - before).toBeLessThan(1000)
    expect(results(agent.session)).toEqual([
      {
        id: 'c1',
        text: 'tool "deaf" (call c1) did not stop within 20 ms of the cancel; its result is abandoned',
        code: 'TOOL_CANCELLED',
      },
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'stop' })
    const length = agent.session.events.length
    late.open('too late')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(agent.session.events.length).toBe(length)
  })

  it('dispose resolves within the grace period although a tool ignores its signal', async () => {
    const h = await createHarness([toolCallResponse('c1', 'deaf', {})], { config: { abortGraceMs: 20 } })
    const started = gate()
    h.app.tools.register({
      name: 'deaf',
      description: 'ignores its signal',
      parameters: z.object({}),
      execute: () => {
        started.open()
        return new Promise<string>(() => undefined)
      },
    })
    const agent = await h.create()
    agent.send(userTextMessage('go'))
    await started.promise
    await agent.dispose()
    expect(outline(agent.session).slice(-4)).toEqual(['tool/call', 'tool/result', 'step/end', 'turn/end'])
    expect(results(agent.session)[0]?.code).toBe('TOOL_CANCELLED')
  })

  it('a tool that stops within the grace period keeps its own result', async () => {
    const h = await createHarness([toolCallResponse('c1', 'polite', {})], { config: { abortGraceMs: 1000 } })
    h.app.tools.register({
      name: 'polite',
      description: 'honours its signal',
      parameters: z.object({}),
      execute: (_args, { signal }) => {
        started.open()
        return new Promise<string>((resolve) =>
          signal.addEventListener('abort', () => resolve('stopped early')),
        )
      },
    })
    const started = gate()
    const agent = await h.create()
    agent.send(userTextMessage('go'))
    await started.promise
    agent.cancel()
    await agent.whenIdle()
    expect(results(agent.session)).toEqual([{ id: 'c1', text: 'stopped early', code: undefined }])
  })

  it('refuses a bad timeoutMs at registration and bad config values at plugin start', async () => {
    const h = await createHarness()
    expect(() =>
      h.app.tools.register({
        name: 't',
        description: 't',
        parameters: z.object({}),
        timeoutMs: -1,
        execute: () => 'x',
      }),
    ).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('timeoutMs') }),
    )
  })
})

describe('invalid tool arguments (issue 13 item 10)', () => {
  it('names the parse problem and quotes a bounded prefix of the arguments', async () => {
    const long = `{"text": "${'x'.repeat(5000)}`
    const h = await createHarness([toolCallResponse('c1', 'echo', long), textResponse('done')])
    echoTool(h)
    const agent = await h.run('go')
    const [result] = results(agent.session)
    expect(result?.code).toBe('INVALID_TOOL_ARGUMENTS')
    expect(result?.text).toMatch(
      /^tool "echo" \(call c1\): arguments are not valid JSON: .+ \(arguments: "\{\\"text\\": \\"x+…" \(5010 characters\)\)$/,
    )
    expect(result?.text.length).toBeLessThan(400)
  })

  it('a short invalid argument string is quoted whole', async () => {
    const h = await createHarness([toolCallResponse('c1', 'echo', '{"text": '), textResponse('done')])
    echoTool(h)
    const agent = await h.run('go')
    const [result] = results(agent.session)
    expect(result?.text).toMatch(
      /^tool "echo" \(call c1\): arguments are not valid JSON: .+ \(arguments: "\{\\"text\\": "\)$/,
    )
  })
})

function userTextMessage(text: string) {
  return {
    id: `m-${text}-${Math.random()}`,
    role: 'user',
    content: [{ type: 'text', text }],
    source: { kind: 'user' },
  } as never
}
