/**
 * Step attribution: `streamInLoopStep` runs a marked request's stream in its step scope, so whatever
 * the `llm/stream` chain does while the loop iterates — on the first `next()` or a later one, before
 * or after an await — sees the step, and the consumer's own code between chunks does not.
 */
import { Context } from 'cordis'
import {
  currentLoopStep,
  type LlmRequest,
  LlmRuntime,
  type LoopStepScope,
  markLoopRequest,
  outsideLoopStep,
  type SessionId,
  type StreamChunk,
  StreamListenerError,
  streamInLoopStep,
  streamListenerOf,
  trackLoopSteps,
} from 'dsh-llm'
import { beforeAll, describe, expect, it } from 'vitest'

const MARK = { sessionId: 's-1' as SessionId, logLength: 6, turn: 1, step: 2 }

function marked(): LlmRequest {
  const request: LlmRequest = { provider: 'p', model: 'm', messages: [] }
  markLoopRequest(request, MARK)
  return request
}

const text = (delta: string): StreamChunk => ({ type: 'text-delta', index: 0, text: delta })
const tick = () => new Promise((resolve) => setTimeout(resolve, 1))

/** What `currentLoopStep()` says at a point: the step's turn/step, or 'none'. */
function seen(): string {
  const scope: LoopStepScope | undefined = currentLoopStep()
  return scope === undefined ? 'none' : `turn ${scope.mark.turn} step ${scope.mark.step}`
}

beforeAll(() => {
  trackLoopSteps()
})

describe('streamInLoopStep', () => {
  it('keeps the step visible to the stream on every next(), also after an await that follows a yield', async () => {
    const log: string[] = []
    const request = marked()
    const stream = streamInLoopStep(
      {
        stream: (req) => {
          log.push(`call: ${seen()}`)
          return (async function* () {
            log.push(`first resume: ${seen()}`)
            yield text('a')
            // Resumed by the consumer's second next(): a re-issue here must still be the step's.
            log.push(`second resume: ${seen()}`)
            await tick()
            log.push(`after await: ${seen()} ${currentLoopStep()?.request === req}`)
            yield text('b')
            await tick()
            log.push(`last resume: ${seen()}`)
          })()
        },
      },
      request,
    )
    for await (const chunk of stream) {
      log.push(`consumer got ${chunk.type === 'text-delta' ? chunk.text : chunk.type}: ${seen()}`)
      await tick()
      log.push(`consumer after await: ${seen()}`)
    }
    log.push(`after the stream: ${seen()}`)
    expect(log).toEqual([
      'call: turn 1 step 2',
      'first resume: turn 1 step 2',
      'consumer got a: none',
      'consumer after await: none',
      'second resume: turn 1 step 2',
      'after await: turn 1 step 2 true',
      'consumer got b: none',
      'consumer after await: none',
      'last resume: turn 1 step 2',
      'after the stream: none',
    ])
  })

  it('runs return() in the scope and closes it for work that outlives the stream', async () => {
    const log: string[] = []
    let later: Promise<void> | undefined
    const stream = streamInLoopStep(
      {
        stream: () =>
          (async function* () {
            try {
              yield text('a')
              yield text('b')
            } finally {
              log.push(`finally: ${seen()}`)
              later = tick().then(() => {
                log.push(`scheduled by the stream, run after it ended: ${seen()}`)
              })
            }
          })(),
      },
      marked(),
    )
    for await (const _chunk of stream) break
    await later
    expect(log).toEqual(['finally: turn 1 step 2', 'scheduled by the stream, run after it ended: none'])
  })

  it('closes the scope when the stream throws, and outsideLoopStep leaves it', async () => {
    const log: string[] = []
    const stream = streamInLoopStep(
      {
        stream: () =>
          (async function* () {
            log.push(`outside: ${outsideLoopStep(seen)}`)
            yield text('a')
            await tick()
            throw new Error('boom')
          })(),
      },
      marked(),
    )
    const iterator = stream[Symbol.asyncIterator]()
    await iterator.next()
    await expect(iterator.next()).rejects.toThrow('boom')
    log.push(`after the throw: ${seen()}`)
    expect(log).toEqual(['outside: none', 'after the throw: none'])
  })

  it('streams an unmarked request without a scope', async () => {
    const log: string[] = []
    const stream = streamInLoopStep(
      {
        stream: () =>
          (async function* () {
            log.push(`stream: ${seen()}`)
            yield text('a')
          })(),
      },
      { provider: 'p', model: 'm', messages: [] },
    )
    for await (const _chunk of stream) {
      // drained
    }
    expect(log).toEqual(['stream: none'])
  })

  describe('through ctx.llm with an llm/stream listener mounted', () => {
    /** A runtime whose adapter yields `a` then `b` (the second after an await), under one listener. */
    async function runtime(log: string[], fail?: Error): Promise<Context> {
      const app = new Context()
      await app.plugin(LlmRuntime)
      app.llm.registerAdapter('p', {
        stream: () =>
          (async function* () {
            log.push(`adapter: ${seen()}`)
            yield text('a')
            await tick()
            log.push(`adapter resumed: ${seen()}`)
            yield text('b')
          })(),
      })
      await app.plugin({
        name: 'wrapper',
        inject: ['llm'],
        apply(ctx: Context) {
          ctx.on('llm/stream', async function* (_request, next) {
            for await (const chunk of next()) {
              yield chunk
              log.push(`listener resumed: ${seen()}`)
            }
            tick().then(() => log.push(`scheduled at the end, run later: ${seen()}`))
            if (fail !== undefined) throw fail
          })
        },
      })
      return app
    }

    it('keeps the scope on every next() and closes it when the stream ends', async () => {
      const log: string[] = []
      const app = await runtime(log)
      for await (const chunk of streamInLoopStep(app.llm, marked())) {
        log.push(`consumer got ${chunk.type === 'text-delta' ? chunk.text : chunk.type}: ${seen()}`)
      }
      log.push(`after the stream: ${seen()}`)
      await tick()
      await tick()
      expect(log).toEqual([
        'adapter: turn 1 step 2',
        'consumer got a: none',
        'listener resumed: turn 1 step 2',
        'adapter resumed: turn 1 step 2',
        'consumer got b: none',
        'listener resumed: turn 1 step 2',
        'after the stream: none',
        'scheduled at the end, run later: none',
      ])
    })

    it('closes the scope when the listener throws, and blames the listener', async () => {
      const log: string[] = []
      const app = await runtime(log, new Error('boom'))
      const iterator = streamInLoopStep(app.llm, marked())[Symbol.asyncIterator]()
      const results: string[] = []
      let thrown: unknown
      try {
        for (;;) {
          const result = await iterator.next()
          if (result.done === true) break
          results.push(result.value.type)
        }
      } catch (error) {
        thrown = error
      }
      await tick()
      await tick()
      expect(results).toEqual(['text-delta', 'text-delta'])
      expect(thrown).toBeInstanceOf(StreamListenerError)
      expect((thrown as StreamListenerError).message).toBe(
        'llm/stream listener of plugin "wrapper" threw: boom',
      )
      expect(streamListenerOf(thrown)).toBe('wrapper')
      expect(log.at(-1)).toBe('scheduled at the end, run later: none')
    })
  })
})
