/**
 * `checkChunks`: an `llm/stream` listener that only inspects the chunks passing through it hands the
 * stream on with a check attached. The caller gets the same chunks, in the same microtask turns as
 * through a listener that changes nothing; a failed check is thrown in place of its chunk, blamed on
 * the listener, and closes the stream below it.
 */
import { Context } from 'cordis'
import {
  checkChunks,
  type LlmRequest,
  LlmRuntime,
  markLoopRequest,
  type SessionId,
  type StreamCheck,
  type StreamChunk,
  streamInLoopStep,
  streamListenerOf,
  trackLoopSteps,
} from 'dsh-llm'
import { beforeAll, describe, expect, it } from 'vitest'

const request: LlmRequest = { provider: 'p', model: 'm', messages: [] }
const start: StreamChunk = { type: 'block-start', index: 0, blockType: 'text' }
const text = (value: string): StreamChunk => ({ type: 'text-delta', index: 0, text: value })
const end: StreamChunk = { type: 'block-end', index: 0, block: { type: 'text', text: 'ab' } }
const stop: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }

/** An adapter over `chunks` that logs each `next` and `return` of its stream in `log`. */
function adapter(chunks: readonly StreamChunk[], log: string[]) {
  return {
    stream: (): AsyncIterable<StreamChunk> => ({
      [Symbol.asyncIterator]() {
        let i = 0
        return {
          next: async () => {
            log.push(`next ${i}`)
            const value = chunks[i++]
            return value === undefined ? { done: true as const, value: undefined } : { done: false, value }
          },
          return: async () => {
            log.push('return')
            return { done: true as const, value: undefined }
          },
        }
      },
    }),
  }
}

/** A check that logs what it sees and fails on a chunk `rejects` names. */
function logged(log: string[], rejects?: (chunk: StreamChunk) => boolean): StreamCheck {
  return {
    chunk(chunk) {
      log.push(`check ${chunk.type}`)
      return rejects?.(chunk) === true ? new Error(`no ${chunk.type} here`) : undefined
    },
    end() {
      log.push('check end')
      return undefined
    },
  }
}

/** A runtime whose adapter streams `chunks`, under one listener of plugin `checker`. */
async function runtime(
  chunks: readonly StreamChunk[],
  log: string[],
  listener: (next: () => AsyncIterable<StreamChunk>) => AsyncIterable<StreamChunk>,
): Promise<Context> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  app.llm.registerAdapter('p', adapter(chunks, log))
  await app.plugin({
    name: 'checker',
    inject: ['llm'],
    apply(ctx: Context) {
      ctx.on('llm/stream', (_request, next) => listener(next))
    },
  })
  return app
}

/** How many microtask turns `promise` takes to settle. */
async function turnsToSettle(promise: Promise<unknown>): Promise<number> {
  let settled = false
  promise.then(
    () => {
      settled = true
    },
    () => {
      settled = true
    },
  )
  let turns = 0
  while (!settled) {
    await null
    turns++
  }
  return turns
}

/** The microtask turns each `next()` of the stream takes, until it is done. */
async function turnsPerChunk(stream: AsyncIterable<StreamChunk>): Promise<number[]> {
  const iterator = stream[Symbol.asyncIterator]()
  const turns: number[] = []
  for (;;) {
    const pending = iterator.next()
    turns.push(await turnsToSettle(pending))
    if ((await pending).done === true) return turns
  }
}

beforeAll(() => {
  trackLoopSteps()
})

describe('checkChunks in an llm/stream listener', () => {
  it('passes every chunk on after the check saw it, holds finish until the stream ended, then ends the check', async () => {
    const log: string[] = []
    const app = await runtime([start, text('a'), end, stop], log, (next) => checkChunks(next(), logged(log)))
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    const seen: unknown[] = []
    for (let i = 0; i < 6; i++) {
      const result = await iterator.next()
      log.push(`caller ${result.done === true ? 'done' : result.value.type}`)
      seen.push(result)
    }
    expect(seen).toEqual([
      { done: false, value: start },
      { done: false, value: text('a') },
      { done: false, value: end },
      { done: false, value: stop },
      { done: true, value: undefined },
      { done: true, value: undefined },
    ])
    expect(log).toEqual([
      'next 0',
      'check block-start',
      'caller block-start',
      'next 1',
      'check text-delta',
      'caller text-delta',
      'next 2',
      'check block-end',
      'caller block-end',
      'next 3',
      'check finish',
      'next 4',
      'check end',
      'caller finish',
      'caller done',
      'caller done',
    ])
  })

  it('takes the microtask turns of a listener that changes nothing, fewer than a wrapping one', async () => {
    const chunks = [start, text('a'), text('b'), end, stop]
    const passing = await runtime(chunks, [], (next) => next())
    const checking = await runtime(chunks, [], (next) => checkChunks(next(), logged([])))
    const wrapping = await runtime(chunks, [], (next) =>
      (async function* () {
        yield* next()
      })(),
    )
    const plain = await turnsPerChunk(passing.llm.stream(request))
    expect(plain).toEqual([5, 3, 3, 3, 3, 3])
    // Each chunk as through the listener that changes nothing; finish waits for the end of the stream
    // below (one more read), and the end, already seen, is answered from a resolved promise.
    expect(await turnsPerChunk(checking.llm.stream(request))).toEqual([5, 3, 3, 3, 6, 2])
    const wrapped = await turnsPerChunk(wrapping.llm.stream(request))
    expect(wrapped[1]).toBeGreaterThan(plain[1] as number)
  })

  it('throws a failed check in place of its chunk, blamed on the listener, and closes the stream below', async () => {
    const log: string[] = []
    const app = await runtime([start, text('a'), end, stop], log, (next) =>
      checkChunks(
        next(),
        logged(log, (chunk) => chunk.type === 'text-delta'),
      ),
    )
    const iterator = app.llm.stream(request)[Symbol.asyncIterator]()
    expect(await iterator.next()).toEqual({ done: false, value: start })
    const thrown = await iterator.next().then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(thrown).toBeInstanceOf(Error)
    expect((thrown as Error).message).toBe(
      'llm/stream listener of plugin "checker" threw: no text-delta here',
    )
    expect(streamListenerOf(thrown)).toBe('checker')
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
    expect(log).toEqual(['next 0', 'check block-start', 'next 1', 'check text-delta', 'return'])
  })

  it('fails the stream at its end when the end check fails, and ends the loop step there', async () => {
    const log: string[] = []
    const marked: LlmRequest = { ...request }
    markLoopRequest(marked, { sessionId: 's-1' as SessionId, logLength: 3, turn: 1, step: 1 })
    const app = await runtime([start, text('a')], log, (next) =>
      checkChunks(next(), {
        chunk: () => undefined,
        end: () => new Error('the stream ended without finish'),
      }),
    )
    const seen: string[] = []
    let thrown: unknown
    try {
      for await (const chunk of streamInLoopStep(app.llm, marked)) seen.push(chunk.type)
    } catch (error) {
      thrown = error
    }
    expect(seen).toEqual(['block-start', 'text-delta'])
    expect((thrown as Error).message).toBe(
      'llm/stream listener of plugin "checker" threw: the stream ended without finish',
    )
    expect(streamListenerOf(thrown)).toBe('checker')
    expect(log).toEqual(['next 0', 'next 1', 'next 2'])
  })

  it('iterated by hand (outside the runtime), checks the same way and blames nobody', async () => {
    const log: string[] = []
    const stream = checkChunks(
      adapter([start, stop, text('late')], log).stream(),
      logged(log, (chunk) => chunk.type === 'text-delta'),
    )
    const iterator = stream[Symbol.asyncIterator]()
    expect((iterator as AsyncIterableIterator<StreamChunk>)[Symbol.asyncIterator]()).toBe(iterator)
    expect(await iterator.next()).toEqual({ done: false, value: start })
    const thrown = await iterator.next().then(
      () => undefined,
      (error: unknown) => error,
    )
    expect((thrown as Error).message).toBe('no text-delta here')
    expect(streamListenerOf(thrown)).toBeUndefined()
    expect(log).toEqual([
      'next 0',
      'check block-start',
      'next 1',
      'check finish',
      'next 2',
      'check text-delta',
      'return',
    ])
  })
})
