import type { Context } from 'cordis'
import { textResponse, toolCallResponse, toolCallsResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  createHarness,
  type dataOf,
  gate,
  lastTurnEnd,
  probeTool,
  type ToolResultRow,
  texts,
  toolResults,
  types,
} from './harness.ts'

/** The tool results, with `code` only where the event carries an error. */
function results(
  session: Parameters<typeof toolResults>[0],
): Array<Omit<ToolResultRow, 'code'> & { code?: string }> {
  return toolResults(session).map(({ code, ...row }) => (code === undefined ? row : { ...row, code }))
}

function callOrder(session: Parameters<typeof dataOf>[0]): string[] {
  return session.events
    .filter((event) => event.type === 'tool/call' || event.type === 'tool/result')
    .map((event) =>
      event.type === 'tool/call'
        ? `call:${event.data.callId}`
        : event.type === 'tool/result'
          ? `result:${event.data.message.content[0].toolCallId}`
          : '',
    )
}

describe('tool execution', () => {
  it('commits results in model order when the second call finishes first (must show 5)', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'slow', args: {} },
        { id: 'c2', name: 'fast', args: {} },
      ]),
      textResponse('done'),
    ])
    const finished: string[] = []
    const fastDone = gate()
    h.app.tools.register({
      name: 'slow',
      description: 'slow',
      parameters: z.object({}),
      execute: async () => {
        await fastDone.promise
        finished.push('slow')
        return 'slow result'
      },
    })
    h.app.tools.register({
      name: 'fast',
      description: 'fast',
      parameters: z.object({}),
      execute: async () => {
        finished.push('fast')
        fastDone.open()
        return 'fast result'
      },
    })
    const agent = await h.run('both')
    expect(finished).toEqual(['fast', 'slow'])
    expect(callOrder(agent.session)).toEqual(['call:c1', 'call:c2', 'result:c1', 'result:c2'])
    expect(results(agent.session)).toEqual([
      { id: 'c1', text: 'slow result', isError: false },
      { id: 'c2', text: 'fast result', isError: false },
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual([
      'both',
      'call:slow|call:fast',
      'result:c1',
      'result:c2',
    ])
  })

  it('invalid argument JSON is not coerced: the body does not run and the result says why', async () => {
    const h = await createHarness([toolCallResponse('c1', 'read', '{"path": '), textResponse('sorry')])
    const read = probeTool(h, {
      name: 'read',
      description: 'reads a file',
      parameters: z.object({ path: z.string() }),
      answer: 'content',
    })
    const agent = await h.run('read it')
    expect(read.ran).toBe(false)
    const [result] = results(agent.session)
    expect(result?.code).toBe('INVALID_TOOL_ARGUMENTS')
    expect(result?.isError).toBe(true)
    expect(result?.text).toMatch(/^tool "read" \(call c1\): arguments are not valid JSON: /)
    expect(types(agent.session)).toContain('tool/call')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
  })

  it('arguments failing the schema get an error result naming the field', async () => {
    const h = await createHarness([toolCallResponse('c1', 'read', { path: 42 }), textResponse('sorry')])
    const read = probeTool(h, {
      name: 'read',
      description: 'reads a file',
      parameters: z.object({ path: z.string() }),
      answer: 'content',
    })
    const agent = await h.run('read it')
    expect(read.ran).toBe(false)
    expect(results(agent.session)).toEqual([
      {
        id: 'c1',
        code: 'INVALID_TOOL_ARGUMENTS',
        isError: true,
        text: 'tool "read" (call c1): arguments do not match the schema: ✖ Invalid input: expected string, received number\n  → at path',
      },
    ])
  })

  it('passes validated (parsed) arguments and the call context to the body', async () => {
    const h = await createHarness([toolCallResponse('c1', 'add', { a: 2, b: 3 }), textResponse('5')])
    const seen: unknown[] = []
    h.app.tools.register({
      name: 'add',
      description: 'adds',
      parameters: z.object({ a: z.number(), b: z.number().default(0) }),
      execute: ({ a, b }, { callId, agent, signal }) => {
        seen.push({ a, b, callId, agent: agent.id, aborted: signal.aborted })
        return [{ type: 'text', text: String(a + b) }]
      },
    })
    const agent = await h.run('2+3')
    expect(seen).toEqual([{ a: 2, b: 3, callId: 'c1', agent: agent.id, aborted: false }])
    expect(results(agent.session)).toEqual([{ id: 'c1', text: '5', isError: false }])
  })

  it('the call context keeps its keys and spreads with its signal; every context shares one signal getter', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'look', args: {} },
        { id: 'c2', name: 'look', args: {} },
      ]),
      textResponse('done'),
    ])
    const contexts: object[] = []
    const spread: unknown[] = []
    h.app.tools.register({
      name: 'look',
      description: 'keeps its context',
      parameters: z.object({}),
      execute: (_args, context) => {
        contexts.push(context)
        const { signal, ...rest } = { ...context }
        spread.push({
          keys: Object.keys(context),
          signal: signal instanceof AbortSignal,
          rest: Object.keys(rest),
        })
        return 'ok'
      },
    })
    await h.run('x')
    expect(spread).toEqual([
      { keys: ['signal', 'callId', 'agent'], signal: true, rest: ['callId', 'agent'] },
      { keys: ['signal', 'callId', 'agent'], signal: true, rest: ['callId', 'agent'] },
    ])
    // A getter made per call turns each context into a slow dictionary object in V8.
    const [first, second] = contexts.map((context) => Object.getOwnPropertyDescriptor(context, 'signal')?.get)
    expect(first).toBeTypeOf('function')
    expect(second).toBe(first)
  })

  it('a call the model invents gets an UNKNOWN_TOOL error result', async () => {
    const h = await createHarness([toolCallResponse('c1', 'nope', {}), textResponse('ok')])
    const agent = await h.run('x')
    expect(results(agent.session)).toEqual([
      {
        id: 'c1',
        code: 'UNKNOWN_TOOL',
        isError: true,
        text: 'tool "nope" (call c1): no such tool is available to this agent',
      },
    ])
  })

  it('a tool not in the agent’s tools option is neither offered nor run', async () => {
    const h = await createHarness([toolCallResponse('c1', 'secret', {}), textResponse('ok')])
    h.app.tools.register({ name: 'public', description: 'p', parameters: z.object({}), execute: () => 'p' })
    const secret = probeTool(h, { name: 'secret', description: 's', answer: 's' })
    const agent = await h.run('x', { tools: ['public'] })
    expect(h.model.requests[0]?.tools?.map((tool) => tool.name)).toEqual(['public'])
    expect(secret.ran).toBe(false)
    expect(results(agent.session)[0]?.code).toBe('UNKNOWN_TOOL')
  })

  it('tools/pre-execute can deny a call with a reason; the body does not run', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'rm', args: { path: '/' } },
        { id: 'c2', name: 'rm', args: { path: 'tmp' } },
      ]),
      textResponse('ok'),
    ])
    const removed: string[] = []
    h.app.tools.register({
      name: 'rm',
      description: 'removes',
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => {
        removed.push(path)
        return `removed ${path}`
      },
    })
    h.app.on('tools/pre-execute', async ({ args, tool }, next) =>
      tool.name === 'rm' && (args as { path: string }).path === '/'
        ? { kind: 'deny', reason: 'not the root' }
        : next(),
    )
    const agent = await h.run('clean')
    expect(removed).toEqual(['tmp'])
    expect(results(agent.session)).toEqual([
      { id: 'c1', code: 'TOOL_DENIED', isError: true, text: 'tool "rm" (call c1) was denied: not the root' },
      { id: 'c2', text: 'removed tmp', isError: false },
    ])
  })

  it('a throwing tool becomes an error result and the loop goes on', async () => {
    const h = await createHarness([toolCallResponse('c1', 'boom', {}), textResponse('recovered')])
    h.app.tools.register({
      name: 'boom',
      description: 'throws',
      parameters: z.object({}),
      execute: () => {
        throw new Error('disk on fire')
      },
    })
    const agent = await h.run('try')
    expect(results(agent.session)).toEqual([
      { id: 'c1', code: 'TOOL_THREW', isError: true, text: 'tool "boom" (call c1) threw: disk on fire' },
    ])
    expect(h.model.callCount).toBe(2)
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
  })

  it('a tool reporting isError is an error result without a harness error', async () => {
    const h = await createHarness([toolCallResponse('c1', 'grep', {}), textResponse('none')])
    h.app.tools.register({
      name: 'grep',
      description: 'g',
      parameters: z.object({}),
      execute: () => ({ content: 'no matches', isError: true }),
    })
    const agent = await h.run('find')
    expect(results(agent.session)).toEqual([{ id: 'c1', text: 'no matches', isError: true }])
  })

  it('concludeTurn ends the turn completed after the step’s tool batch, without another model call', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'finish', args: {} },
        { id: 'c2', name: 'note', args: {} },
      ]),
      textResponse('never'),
    ])
    h.app.tools.register({
      name: 'finish',
      description: 'f',
      parameters: z.object({}),
      execute: () => ({ content: 'finished', concludeTurn: true }),
    })
    h.app.tools.register({ name: 'note', description: 'n', parameters: z.object({}), execute: () => 'noted' })
    const agent = await h.run('wrap up')
    expect(h.model.callCount).toBe(1)
    expect(types(agent.session).slice(-5)).toEqual([
      'tool/call',
      'tool/result',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
  })

  it('tools/post-execute may rewrite a result', async () => {
    const h = await createHarness([toolCallResponse('c1', 'env', {}), textResponse('ok')])
    h.app.tools.register({
      name: 'env',
      description: 'e',
      parameters: z.object({}),
      execute: () => 'KEY=secret',
    })
    h.app.on('tools/post-execute', async (_input, next) => {
      const output = await next()
      return { ...output, content: [{ type: 'text', text: 'KEY=[redacted]' }] }
    })
    const agent = await h.run('show env')
    expect(results(agent.session)).toEqual([{ id: 'c1', text: 'KEY=[redacted]', isError: false }])
  })
})

describe('tool concurrency', () => {
  it('runs at most maxToolConcurrency parallel calls at once, starting them in model order', async () => {
    const calls = ['c1', 'c2', 'c3', 'c4'].map((id) => ({ id, name: 'work', args: { id } }))
    const h = await createHarness([toolCallsResponse(calls), textResponse('done')], {
      config: { maxToolConcurrency: 2 },
    })
    let running = 0
    let peak = 0
    const started: string[] = []
    h.app.tools.register({
      name: 'work',
      description: 'w',
      parameters: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        started.push(id)
        running++
        peak = Math.max(peak, running)
        await new Promise((resolve) => setTimeout(resolve, 5))
        running--
        return id
      },
    })
    const agent = await h.run('go')
    expect(peak).toBe(2)
    expect(started).toEqual(['c1', 'c2', 'c3', 'c4'])
    expect(callOrder(agent.session)).toEqual([
      'call:c1',
      'call:c2',
      'result:c1',
      'call:c3',
      'result:c2',
      'call:c4',
      'result:c3',
      'result:c4',
    ])
  })

  it('an exclusive tool runs alone: after the calls before it, before the calls after it', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'read', args: {} },
        { id: 'c2', name: 'write', args: {} },
        { id: 'c3', name: 'read', args: {} },
      ]),
      textResponse('done'),
    ])
    const log: string[] = []
    let running = 0
    const tool = (name: string, mode: 'parallel' | 'exclusive') =>
      h.app.tools.register({
        name,
        description: name,
        mode,
        parameters: z.object({}),
        execute: async (_args, { callId }) => {
          running++
          log.push(`${callId} start (running ${running})`)
          await new Promise((resolve) => setTimeout(resolve, 2))
          running--
          log.push(`${callId} end`)
          return name
        },
      })
    tool('read', 'parallel')
    tool('write', 'exclusive')
    const agent = await h.run('edit')
    expect(log).toEqual([
      'c1 start (running 1)',
      'c1 end',
      'c2 start (running 1)',
      'c2 end',
      'c3 start (running 1)',
      'c3 end',
    ])
    expect(callOrder(agent.session)).toEqual([
      'call:c1',
      'result:c1',
      'call:c2',
      'result:c2',
      'call:c3',
      'result:c3',
    ])
  })
})

describe('ctx.tools', () => {
  it('refuses a duplicate name and a bad name; a disposer unregisters', async () => {
    const h = await createHarness()
    const dispose = h.app.tools.register({
      name: 'a',
      description: 'a',
      parameters: z.object({}),
      execute: () => 'a',
    })
    expect(() =>
      h.app.tools.register({ name: 'a', description: 'again', parameters: z.object({}), execute: () => 'a' }),
    ).toThrow(
      expect.objectContaining({
        code: 'DUPLICATE_TOOL',
        message: 'tools.register: tool "a" is already registered',
      }),
    )
    expect(() =>
      h.app.tools.register({
        name: 'has space',
        description: 'x',
        parameters: z.object({}),
        execute: () => 'x',
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: 'tools.register: name "has space" must be 1-64 characters of [A-Za-z0-9_-]',
      }),
    )
    expect(h.app.tools.names()).toEqual(['a'])
    dispose()
    expect(h.app.tools.names()).toEqual([])
  })

  it('a registration is an effect of the calling plugin: it goes away when the plugin unloads', async () => {
    const h = await createHarness()
    const fiber = h.app.plugin({
      inject: ['tools'],
      apply: (ctx: Context) => {
        ctx.tools.register({ name: 'scoped', description: 's', parameters: z.object({}), execute: () => 's' })
      },
    })
    await fiber
    expect(h.app.tools.names()).toEqual(['scoped'])
    await fiber.dispose()
    expect(h.app.tools.names()).toEqual([])
  })
})
