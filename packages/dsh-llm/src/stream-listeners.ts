/**
 * The `llm/stream` waterfall with blame: each listener's failures — thrown when it is called, or
 * from the stream it returns — are attributed to the plugin that registered it, so a broken
 * middleware is not mistaken for a broken provider.
 */
import { HarnessError, LlmErrorCode } from './errors.ts'
import type { LlmRequest } from './request.ts'
import type { StreamChunk } from './stream.ts'
import { CheckedChunks, CheckedIterator } from './stream-check.ts'

/** One registered `llm/stream` listener, as cordis keeps it. */
export interface StreamHook {
  readonly ctx: { readonly fiber?: { readonly name?: string } }
  readonly callback: (request: LlmRequest, next: () => AsyncIterable<StreamChunk>) => unknown
}

/**
 * Thrown for an `llm/stream` listener that threw something other than a `HarnessError`: code
 * `STREAM_LISTENER_FAILED`, `listener` the registering plugin's name, the original as `cause`.
 */
export class StreamListenerError extends HarnessError {
  readonly listener: string
  constructor(listener: string, error: unknown) {
    super(
      LlmErrorCode.STREAM_LISTENER_FAILED,
      `llm/stream listener of plugin "${listener}" threw: ${describe(error)}`,
      { cause: error },
    )
    this.name = 'StreamListenerError'
    this.listener = listener
  }
}

const blamed = new WeakMap<object, string>()

/**
 * The plugin name of the `llm/stream` listener that threw `error`, or `undefined` when it did not
 * come from a listener. A `HarnessError` a listener throws keeps its identity (an invariant check
 * fails loudly with its own code); it is only recorded here.
 */
export function streamListenerOf(error: unknown): string | undefined {
  return error !== null && typeof error === 'object' ? blamed.get(error) : undefined
}

function describe(error: unknown): string {
  try {
    if (error instanceof Error) return error.message
    return typeof error === 'string' ? error : String(error)
  } catch {
    return 'an unprintable value'
  }
}

function blame(error: unknown, listener: string): unknown {
  if (error !== null && typeof error === 'object' && blamed.has(error)) return error
  const attributed = error instanceof HarnessError ? error : new StreamListenerError(listener, error)
  blamed.set(attributed, listener)
  return attributed
}

function listenerName(hook: StreamHook): string {
  const name = hook.ctx.fiber?.name
  return typeof name === 'string' && name !== '' ? name : 'anonymous'
}

/**
 * Runs `hooks` (first outermost) around `inner`, like `ctx.waterfall('llm/stream', ...)`, blaming
 * each failure on the listener it came from: an error already blamed on an inner listener passes
 * through unchanged. Calling `next` twice throws, as in cordis.
 */
export function blamedWaterfall(
  hooks: readonly StreamHook[],
  request: LlmRequest,
  inner: () => AsyncIterable<StreamChunk>,
): AsyncIterable<StreamChunk> {
  const dispatch = (index: number): AsyncIterable<StreamChunk> => {
    const hook = hooks[index]
    if (hook === undefined) return inner()
    const name = listenerName(hook)
    let called = false
    const next = () => {
      if (called) throw new Error('next() called multiple times')
      called = true
      return dispatch(index + 1)
    }
    let produced: unknown
    try {
      produced = hook.callback(request, next)
    } catch (error) {
      throw blame(error, name)
    }
    return blamedIterable(produced as AsyncIterable<StreamChunk>, name)
  }
  return dispatch(0)
}

function blamedIterable(source: AsyncIterable<StreamChunk>, name: string): AsyncIterable<StreamChunk> {
  // A check handed on with the stream below (`checkChunks`) runs in this listener's one reaction.
  if (source instanceof CheckedChunks) {
    const blamed = (error: unknown) => blame(error, name)
    return {
      [Symbol.asyncIterator]: () => new CheckedIterator(source.source, source.check, blamed),
    }
  }
  return {
    [Symbol.asyncIterator]: () => {
      let iterator: AsyncIterator<StreamChunk>
      try {
        iterator = source[Symbol.asyncIterator]()
      } catch (error) {
        throw blame(error, name)
      }
      return new BlamedIterator(iterator, name)
    },
  }
}

/**
 * A listener's stream with its failures blamed on the listener. `whenEnded` lets the one who reads
 * it (`streamInLoopStep`) hear the end in the same reaction that blames a failure: one promise per
 * chunk instead of two.
 */
class BlamedIterator implements AsyncIterator<StreamChunk> {
  /** Called once the stream ended: a `done` result, or a failure of `next`. */
  private ended: (() => void) | undefined

  constructor(
    private readonly iterator: AsyncIterator<StreamChunk>,
    private readonly name: string,
  ) {}

  private readonly rethrow = (error: unknown): never => {
    throw blame(error, this.name)
  }

  private readonly settled = (result: IteratorResult<StreamChunk>): IteratorResult<StreamChunk> => {
    if (result.done === true) this.ended?.()
    return result
  }

  private readonly failed = (error: unknown): never => {
    this.ended?.()
    throw blame(error, this.name)
  }

  /** Calls `ended` once the stream ends; false (and nothing is called) when another is already set. */
  whenEnded(ended: () => void): boolean {
    if (this.ended !== undefined) return false
    this.ended = ended
    return true
  }

  next(): Promise<IteratorResult<StreamChunk>> {
    try {
      // Typed as what a listener's iterator may return in fact: not always a promise.
      const pending: PromiseLike<IteratorResult<StreamChunk>> = this.iterator.next()
      // A promise's `catch` is its `then`: with `ended` heard, both reactions go in one.
      if (this.ended !== undefined && pending instanceof Promise)
        return pending.then(this.settled, this.failed)
      const blamed = (pending as Promise<IteratorResult<StreamChunk>>).catch(this.rethrow)
      return this.ended === undefined ? blamed : blamed.then(this.settled, this.failed)
    } catch (error) {
      this.ended?.()
      return Promise.reject(blame(error, this.name))
    }
  }

  return(value?: unknown): Promise<IteratorResult<StreamChunk>> {
    const iterator = this.iterator
    return iterator.return === undefined
      ? Promise.resolve({ done: true as const, value: undefined })
      : iterator.return(value).catch(this.rethrow)
  }
}

/**
 * Calls `ended` once the stream of `iterator` ends (a `done` result or a failed `next`), when it is
 * the stream of an `llm/stream` listener (`LlmRuntime.stream` with listeners mounted) whose end
 * nobody hears yet. Returns false, calling nothing, for any other iterator: the caller then watches
 * the results itself. Package-internal.
 */
export function whenStreamEnded(iterator: AsyncIterator<StreamChunk>, ended: () => void): boolean {
  return (
    (iterator instanceof BlamedIterator || iterator instanceof CheckedIterator) && iterator.whenEnded(ended)
  )
}
