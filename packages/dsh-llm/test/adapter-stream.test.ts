/**
 * The iteration protocol of the stream `llm.stream` returns around an adapter: when the adapter is
 * called, how `next` and `return` interleave with the adapter's iterator, and what ends the stream.
 */
import { Context } from 'cordis'
import { type LlmAdapter, type LlmRequest, LlmRuntime, type StreamChunk } from 'dsh-llm'
import { textResponse } from 'dsh-llm/testing'
import { beforeEach, describe, expect, it } from 'vitest'

const request: LlmRequest = { provider: 'p', model: 'm', messages: [] }

const delta = (text: string): StreamChunk => ({ type: 'text-delta', index: 0, text })

/** A hand-written adapter iterator whose `next` results the test releases one by one. */
function manualAdapter(log: string[]) {
  const waiting: ((result: IteratorResult<StreamChunk>) => void)[] = []
  let streamed = 0
  const iterator: AsyncIterator<StreamChunk> = {
    next: () => {
      log.push('adapter next')
      return new Promise((resolve) => waiting.push(resolve))
    },
    return: async () => {
      log.push('adapter return')
      return { done: true, value: undefined }
    },
  }
  const adapter: LlmAdapter = {
    stream: () => {
      streamed++
      log.push('adapter stream')
      return { [Symbol.asyncIterator]: () => iterator }
    },
  }
  return {
    adapter,
    get streamed() {
      return streamed
    },
    release(result: IteratorResult<StreamChunk>) {
      const resolve = waiting.shift()
      if (resolve === undefined) throw new Error('no pending next')
      resolve(result)
    },
  }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

let app: Context

beforeEach(async () => {
  app = new Context()
  await app.plugin(LlmRuntime)
})

describe('the adapter stream', () => {
  it('calls the adapter at the first next, not when the stream is made', async () => {
    const log: string[] = []
    const manual = manualAdapter(log)
    app.llm.registerAdapter('p', manual.adapter)
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    await tick()
    expect(manual.streamed).toBe(0)
    const first = iterator.next()
    await tick()
    expect(log).toEqual(['adapter stream', 'adapter next'])
    manual.release({ done: false, value: delta('a') })
    expect(await first).toEqual({ done: false, value: delta('a') })
  })

  it('never calls the adapter when returned before the first next', async () => {
    const log: string[] = []
    const manual = manualAdapter(log)
    app.llm.registerAdapter('p', manual.adapter)
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    expect(await iterator.return?.()).toEqual({ done: true, value: undefined })
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
    expect(log).toEqual([])
  })

  it('holds a return behind the pending next, then releases the adapter', async () => {
    const log: string[] = []
    const manual = manualAdapter(log)
    app.llm.registerAdapter('p', manual.adapter)
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    const first = iterator.next()
    await tick()
    const returned = iterator.return?.()
    await tick()
    expect(log).toEqual(['adapter stream', 'adapter next'])
    manual.release({ done: false, value: delta('a') })
    expect(await first).toEqual({ done: false, value: delta('a') })
    expect(await returned).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['adapter stream', 'adapter next', 'adapter return'])
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
  })

  it('answers overlapping next calls in order', async () => {
    app.llm.registerAdapter('p', {
      async *stream() {
        yield* textResponse('ab')
      },
    })
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    const results = await Promise.all([iterator.next(), iterator.next(), iterator.next(), iterator.next()])
    expect(results.map((result) => (result.done === true ? 'done' : result.value.type))).toEqual(
      textResponse('ab')
        .slice(0, 4)
        .map((chunk) => chunk.type),
    )
  })

  it('ends after an adapter that completes, without returning it', async () => {
    const log: string[] = []
    const manual = manualAdapter(log)
    app.llm.registerAdapter('p', manual.adapter)
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    const first = iterator.next()
    await tick()
    manual.release({ done: true, value: undefined })
    expect(await first).toEqual({ done: true, value: undefined })
    expect(await iterator.return?.()).toEqual({ done: true, value: undefined })
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['adapter stream', 'adapter next'])
  })

  it('ends after the terminal finish of a failure, without returning the adapter', async () => {
    const log: string[] = []
    app.llm.registerAdapter('p', {
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.reject(new Error('socket reset')),
          return: async () => {
            log.push('adapter return')
            return { done: true as const, value: undefined }
          },
        }),
      }),
    })
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    expect(await iterator.next()).toEqual({
      done: false,
      value: {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: { code: 'ADAPTER_THREW', message: 'adapter for "p" threw: socket reset' },
        },
      },
    })
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
    expect(await iterator.return?.()).toEqual({ done: true, value: undefined })
    expect(log).toEqual([])
  })

  it('rejects for an adapter iterator that resolves to a non-object, and returns the adapter', async () => {
    const log: string[] = []
    app.llm.registerAdapter('p', {
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: async () => undefined as unknown as IteratorResult<StreamChunk>,
          return: async () => {
            log.push('adapter return')
            return { done: true as const, value: undefined }
          },
        }),
      }),
    })
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    await expect(iterator.next()).rejects.toThrow(TypeError)
    expect(log).toEqual(['adapter return'])
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
  })
})
