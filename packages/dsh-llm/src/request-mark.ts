/**
 * Which loop step a model request belongs to. The loop marks the request it derives and streams it
 * inside a step scope; a checker at the adapter boundary reads the scope of whatever request arrives
 * there, so a listener that re-sends a modified copy cannot shed the attribution with the object.
 */
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks'
import type { SessionId } from './ids.ts'
import type { LlmRequest } from './request.ts'
import type { StreamChunk } from './stream.ts'
import { whenStreamEnded } from './stream-listeners.ts'

/** Where a loop-built request came from: the session, the log prefix it saw, and its step. */
export interface LoopRequestMark {
  readonly sessionId: SessionId
  /** The log length (next seq) when the request was built; the request derives from seqs below it. */
  readonly logLength: number
  /** The turn and step the request was built for, when the builder knows them. */
  readonly turn?: number
  readonly step?: number
}

/** A loop step's model call in progress: its mark and the request the loop derived for it. */
export interface LoopStepScope {
  readonly mark: LoopRequestMark
  /** The request the loop built and handed to `llm.stream`. */
  readonly request: LlmRequest
}

interface OpenScope extends LoopStepScope {
  open: boolean
}

const marks = new WeakMap<LlmRequest, LoopRequestMark>()
const STORAGE = Symbol.for('dsh-llm/loop-step-storage')

/** The process-wide step storage, shared by every copy of this module; absent until tracking starts. */
function storage(): AsyncLocalStorage<OpenScope> | undefined {
  return (globalThis as { [STORAGE]?: AsyncLocalStorage<OpenScope> })[STORAGE]
}

/**
 * Records that `request` was built by the agent loop from the given log prefix. The mark lives beside
 * the request, not inside it: the request stays exactly what the model receives.
 */
export function markLoopRequest(request: LlmRequest, mark: LoopRequestMark): void {
  const kept: { -readonly [K in keyof LoopRequestMark]: LoopRequestMark[K] } = {
    sessionId: mark.sessionId,
    logLength: mark.logLength,
  }
  if (mark.turn !== undefined) kept.turn = mark.turn
  if (mark.step !== undefined) kept.step = mark.step
  marks.set(request, Object.freeze(kept))
}

/** The mark of a loop-built request, or `undefined` for a request built elsewhere. */
export function loopRequestMark(request: LlmRequest): LoopRequestMark | undefined {
  return marks.get(request)
}

/**
 * Turns on step attribution for this process (idempotent): from now on `streamInLoopStep` runs each
 * step's model call in an async scope that `currentLoopStep` reads. A boundary checker calls it when
 * it mounts; without one, streaming a step costs nothing extra.
 */
export function trackLoopSteps(): void {
  const holder = globalThis as { [STORAGE]?: AsyncLocalStorage<OpenScope> }
  holder[STORAGE] ??= new AsyncLocalStorage<OpenScope>()
}

/**
 * The loop step whose model call is running in the current async context, or `undefined` outside
 * any step (or once that step's stream has ended, for work it scheduled that outlives it). Anything
 * the step's `llm/stream` chain calls — re-entrant `llm.stream` calls, timers, awaited work — sees it.
 */
export function currentLoopStep(): LoopStepScope | undefined {
  const scope = storage()?.getStore()
  return scope?.open === true ? scope : undefined
}

/**
 * Runs `fn` outside any loop step: model calls it makes are not the step's request, and a boundary
 * checker reports them as sent outside a step instead of comparing them with the step's derivation.
 * For a plugin that calls a model of its own (a classifier, a summariser) while a step streams.
 */
export function outsideLoopStep<T>(fn: () => T): T {
  const als = storage()
  return als === undefined ? fn() : als.exit(fn)
}

/** What `streamInLoopStep` needs of the runtime: its `stream`. */
export interface LoopStepStreamer {
  stream(request: LlmRequest): AsyncIterable<StreamChunk>
}

/**
 * Streams the marked loop request `request` through `llm.stream` inside its step scope: the call and
 * every `next`/`return` of the iteration run in the scope, which closes when the stream ends, throws
 * or is returned. An unmarked request, or step tracking off, streams as `llm.stream(request)` does.
 * Throws (synchronously or from the iteration) whatever `llm.stream` throws.
 *
 * The scope is entered once, when the stream starts: the async context of that moment plus the
 * scope is held by an `AsyncResource`, and each `next`/`return` re-enters that context. (`run` per
 * chunk would build the context afresh each time: on Node 24 two map copies per chunk.) The other
 * async-local values a chunk's work sees are therefore those of the stream's start.
 */
export function streamInLoopStep(llm: LoopStepStreamer, request: LlmRequest): AsyncIterable<StreamChunk> {
  const als = storage()
  const mark = marks.get(request)
  if (als === undefined || mark === undefined) return llm.stream(request)
  const scope: OpenScope = { mark, request, open: true }
  const close = () => {
    scope.open = false
  }
  const context = als.run(scope, () => new AsyncResource('dsh-llm/loop-step'))
  let source: AsyncIterable<StreamChunk>
  try {
    source = context.runInAsyncScope(llm.stream, llm, request)
  } catch (error) {
    close()
    throw error
  }
  return {
    [Symbol.asyncIterator](): AsyncIterator<StreamChunk> {
      const iterator = context.runInAsyncScope(source[Symbol.asyncIterator], source)
      const settle = (result: IteratorResult<StreamChunk>) => {
        if (result.done === true) close()
        return result
      }
      const fail = (error: unknown): never => {
        close()
        throw error
      }
      // The stream of an `llm/stream` listener hears its own end in the reaction that blames its
      // failures: its results then need no second reaction here.
      const heard = whenStreamEnded(iterator, close)
      return {
        next: () => {
          try {
            const pending = context.runInAsyncScope(iterator.next, iterator)
            return heard ? pending : pending.then(settle, fail)
          } catch (error) {
            close()
            return Promise.reject(error)
          }
        },
        return: async (value?: unknown) => {
          try {
            const done =
              iterator.return === undefined
                ? undefined
                : context.runInAsyncScope(iterator.return, iterator, value)
            return (await done) ?? { done: true, value: undefined }
          } finally {
            close()
          }
        },
      }
    },
  }
}
