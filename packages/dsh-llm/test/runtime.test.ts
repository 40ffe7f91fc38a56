import { Context } from 'cordis'
import LlmRuntimePlugin, {
  HarnessError,
  type LlmAdapter,
  LlmError,
  type LlmRequest,
  LlmRuntime,
  llmFailure,
  type StreamChunk,
} from 'dsh-llm'
import { hangUntilAborted, scriptedAdapter, textResponse, throwAfter } from 'dsh-llm/testing'
import { beforeEach, describe, expect, it } from 'vitest'

const request: LlmRequest = { provider: 'p', model: 'm', messages: [] }

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const chunk of stream) out.push(chunk)
  return out
}

function errorFinish(code: string, message: string): StreamChunk {
  return { type: 'finish', reason: { kind: 'error', failure: { code, message } } }
}

function thrownBy(run: () => unknown): { code: string; message: string } {
  try {
    run()
  } catch (error) {
    if (error instanceof HarnessError) return { code: error.code, message: error.message }
    throw error
  }
  throw new Error('expected a throw')
}

let app: Context

beforeEach(async () => {
  app = new Context()
  await app.plugin(LlmRuntime)
})

describe('LlmRuntime', () => {
  it('is the default export and provides ctx.llm', () => {
    expect(LlmRuntimePlugin).toBe(LlmRuntime)
    expect(app.llm).toBeInstanceOf(LlmRuntime)
  })

  it('streams the chunks of the adapter registered for the provider', async () => {
    const adapter = scriptedAdapter([textResponse('hi')])
    app.llm.registerAdapter(['p', 'q'], adapter)
    expect(await collect(app.llm.stream(request))).toEqual(textResponse('hi'))
    expect(adapter.requests).toEqual([request])
    expect(app.llm.providers()).toEqual(['p', 'q'])
    expect(app.llm.adapterFor('q')).toBe(adapter)
  })

  it('runs llm/stream listeners around the adapter, first registered outermost, prepend outermost', async () => {
    const log: string[] = []
    app.llm.registerAdapter('p', {
      async *stream() {
        log.push('adapter')
        yield* textResponse('x')
      },
    })
    const wrap = (name: string) =>
      async function* (req: LlmRequest, next: () => AsyncIterable<StreamChunk>) {
        log.push(`${name} in ${req.model}`)
        for await (const chunk of next()) yield chunk
        log.push(`${name} out`)
      }
    app.on('llm/stream', wrap('first'))
    app.on('llm/stream', wrap('second'))
    app.on('llm/stream', wrap('prepended'), { prepend: true })
    await collect(app.llm.stream(request))
    expect(log).toEqual([
      'prepended in m',
      'first in m',
      'second in m',
      'adapter',
      'second out',
      'first out',
      'prepended out',
    ])
  })

  it('lets a listener rewrite the stream it passes outward', async () => {
    app.llm.registerAdapter('p', scriptedAdapter([textResponse('hi')]))
    app.on('llm/stream', async function* (_req, next) {
      for await (const chunk of next()) yield chunk.type === 'text-delta' ? { ...chunk, text: 'HI' } : chunk
    })
    const chunks = await collect(app.llm.stream(request))
    expect(chunks.filter((c) => c.type === 'text-delta')).toEqual([
      { type: 'text-delta', index: 0, text: 'HI' },
    ])
  })

  it('removes the registration through its disposer', async () => {
    const dispose = app.llm.registerAdapter('p', scriptedAdapter([textResponse('hi')]))
    dispose()
    expect(app.llm.providers()).toEqual([])
    expect(await collect(app.llm.stream(request))).toEqual([
      errorFinish('NO_ADAPTER', 'no adapter registered for provider "p"'),
    ])
    dispose()
    app.llm.registerAdapter('p', scriptedAdapter([]))
    expect(app.llm.providers()).toEqual(['p'])
  })

  it('refuses a provider registered twice, registering nothing from the failed call', () => {
    app.llm.registerAdapter('p', scriptedAdapter([]))
    expect(thrownBy(() => app.llm.registerAdapter(['q', 'p'], scriptedAdapter([])))).toEqual({
      code: 'DUPLICATE_ADAPTER',
      message: 'registerAdapter: provider "p" already has an adapter',
    })
    expect(thrownBy(() => app.llm.registerAdapter(['r', 'r'], scriptedAdapter([])))).toEqual({
      code: 'DUPLICATE_ADAPTER',
      message: 'registerAdapter: provider "r" already has an adapter',
    })
    expect(thrownBy(() => app.llm.registerAdapter('', scriptedAdapter([])))).toEqual({
      code: 'INVALID_OPTIONS',
      message: 'registerAdapter: provider names must be non-empty strings, got ""',
    })
    expect(app.llm.providers()).toEqual(['p'])
  })

  it('yields a single NO_ADAPTER finish for an unknown provider', async () => {
    expect(await collect(app.llm.stream({ ...request, provider: 'nope' }))).toEqual([
      errorFinish('NO_ADAPTER', 'no adapter registered for provider "nope"'),
    ])
  })

  it('normalises an adapter that throws synchronously', async () => {
    app.llm.registerAdapter('p', {
      stream() {
        throw new Error('bad key format')
      },
    })
    expect(await collect(app.llm.stream(request))).toEqual([
      errorFinish('ADAPTER_THREW', 'adapter for "p" threw: bad key format'),
    ])
  })

  it('normalises an adapter whose stream() rejects, keeping a thrown LlmError failure', async () => {
    const rejecting = {
      async stream() {
        throw new LlmError(llmFailure('RATE_LIMIT', 'slow down', { status: 429, retryAfterMs: 1000 }))
      },
    } as unknown as LlmAdapter
    app.llm.registerAdapter('p', rejecting)
    expect(await collect(app.llm.stream(request))).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: { code: 'RATE_LIMIT', message: 'slow down', status: 429, retryAfterMs: 1000 },
        },
      },
    ])
  })

  it('normalises an adapter that returns something that is not an async iterable', async () => {
    app.llm.registerAdapter('p', { stream: () => [] as unknown as AsyncIterable<StreamChunk> })
    expect(await collect(app.llm.stream(request))).toEqual([
      errorFinish('ADAPTER_THREW', 'adapter for "p" threw: stream() did not return an async iterable'),
    ])
  })

  it('keeps what an adapter yielded before throwing mid-stream, then one terminal finish', async () => {
    const prefix = textResponse('partial').slice(0, 2)
    app.llm.registerAdapter('p', scriptedAdapter([throwAfter(new Error('socket reset'), prefix)]))
    expect(await collect(app.llm.stream(request))).toEqual([
      ...prefix,
      errorFinish('ADAPTER_THREW', 'adapter for "p" threw: socket reset'),
    ])
  })

  it('turns a throw after the request was aborted into an aborted finish', async () => {
    const controller = new AbortController()
    app.llm.registerAdapter('p', {
      async *stream(req) {
        yield { type: 'text-delta', index: 0, text: 'a' }
        controller.abort(new Error('user cancelled'))
        req.signal?.throwIfAborted()
      },
    })
    expect(await collect(app.llm.stream({ ...request, signal: controller.signal }))).toEqual([
      { type: 'text-delta', index: 0, text: 'a' },
      {
        type: 'finish',
        reason: {
          kind: 'aborted',
          failure: { code: 'ABORTED', message: 'request to "p" aborted: user cancelled' },
        },
      },
    ])
  })

  it('lets the adapter release its resources when the consumer stops early', async () => {
    const log: string[] = []
    app.llm.registerAdapter('p', {
      async *stream() {
        try {
          yield* textResponse('hello')
        } finally {
          log.push('adapter closed')
        }
      },
    })
    for await (const chunk of app.llm.stream(request)) {
      if (chunk.type === 'text-delta') break
    }
    expect(log).toEqual(['adapter closed'])
  })

  it('answers overlapping next() calls in order, then done', async () => {
    app.llm.registerAdapter('p', scriptedAdapter([textResponse('ab')]))
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    const expected = textResponse('ab')
    const answers = await Promise.all(expected.map(() => iterator.next()))
    expect(answers).toEqual(expected.map((value) => ({ done: false, value })))
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
  })

  it('never opens the adapter stream when stopped before the first next()', async () => {
    let opened = 0
    app.llm.registerAdapter('p', {
      stream() {
        opened++
        return scriptedAdapter([textResponse('x')]).stream(request)
      },
    })
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    expect(await iterator.return?.()).toEqual({ done: true, value: undefined })
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
    expect(opened).toBe(0)
  })

  it('a return() during a pending next waits for it, then closes the late stream (async-generator order)', async () => {
    const log: string[] = []
    let deliver: () => void = () => undefined
    app.llm.registerAdapter('p', {
      async stream() {
        await new Promise<void>((resolve) => {
          deliver = resolve
        })
        return (async function* () {
          try {
            log.push('read')
            yield* textResponse('late')
          } finally {
            log.push('closed')
          }
        })()
      },
    } as unknown as LlmAdapter)
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    const first = iterator.next()
    await Promise.resolve()
    let returned = false
    const stopping = iterator.return?.().then((result) => {
      returned = true
      return result
    })
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(returned).toBe(false)
    deliver()
    expect((await first).done).toBe(false)
    expect(await stopping).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['read', 'closed'])
  })

  it('passes the abort through to a hanging adapter', async () => {
    const controller = new AbortController()
    app.llm.registerAdapter('p', scriptedAdapter([hangUntilAborted(textResponse('wait').slice(0, 2))]))
    const chunks: StreamChunk[] = []
    for await (const chunk of app.llm.stream({ ...request, signal: controller.signal })) {
      chunks.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(chunks.map((c) => c.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(chunks[2]).toEqual({
      type: 'finish',
      reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'scripted adapter: call #1 aborted' } },
    })
  })

  it('lets errors thrown by listeners propagate to the caller', async () => {
    app.llm.registerAdapter('p', scriptedAdapter([textResponse('a'), textResponse('b')]))
    const dispose = app.on('llm/stream', () => {
      throw new Error('checker: bad request')
    })
    expect(() => app.llm.stream(request)).toThrow('checker: bad request')
    dispose()
    app.on('llm/stream', async function* (_req, next) {
      yield* next()
      throw new Error('checker: bad stream')
    })
    await expect(collect(app.llm.stream(request))).rejects.toThrow('checker: bad stream')
  })

  it('removes the adapter when the plugin that registered it unloads', async () => {
    const fiber = await app.plugin({
      inject: ['llm'],
      apply(ctx: Context) {
        ctx.llm.registerAdapter('p', scriptedAdapter([textResponse('hi')]))
      },
    })
    expect(app.llm.providers()).toEqual(['p'])
    await fiber.dispose()
    expect(app.llm.providers()).toEqual([])
    expect(await collect(app.llm.stream(request))).toEqual([
      errorFinish('NO_ADAPTER', 'no adapter registered for provider "p"'),
    ])
  })
})
