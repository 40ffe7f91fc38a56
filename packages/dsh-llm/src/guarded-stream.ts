/**
 * The innermost step of every model call: the adapter's stream with its failures turned into data.
 * A hand-written async iterator rather than an async generator: each chunk costs one promise
 * reaction on top of the adapter's own `next()`, not a generator resumption and a second promise.
 */
import { LlmError, LlmErrorCode, type LlmFailure, llmFailure } from './errors.ts'
import type { LlmAdapter, LlmRequest } from './request.ts'
import type { StreamChunk } from './stream.ts'

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/**
 * The stream of `adapter` (looked up when the chain reached the innermost step) for `request`,
 * keeping the adapter contract whatever the adapter does: no adapter gives one `finish {error}`
 * (`NO_ADAPTER`); a `stream()` that throws, rejects, returns no async iterable, or an iteration
 * that throws gives what was yielded so far and then one terminal `finish` — `{aborted}` (`ABORTED`)
 * if `request.signal` is aborted, else `{error}` with the thrown `LlmError`'s failure or
 * `ADAPTER_THREW`. `stream()` is called on the first `next()`. A consumer that stops early
 * (`return()`) makes it call the adapter iterator's `return()`, whose failure is dropped. A `next()`
 * made while another is outstanding goes to the adapter's iterator in order (an async generator
 * answers such calls in order too).
 */
export function guardedStream(
  adapter: LlmAdapter | undefined,
  request: LlmRequest,
): AsyncIterable<StreamChunk> {
  return new GuardedStream(adapter, request)
}

type State = 'start' | 'opening' | 'streaming' | 'done'

class GuardedStream implements AsyncIterableIterator<StreamChunk> {
  private state: State = 'start'
  private iterator: AsyncIterator<StreamChunk> | undefined
  /** While the adapter's `stream()` is awaited: its outcome, which a `next()` arriving meanwhile waits for. */
  private opening: Promise<unknown> | undefined
  private readonly settled = (result: IteratorResult<StreamChunk>): IteratorResult<StreamChunk> => {
    if (result.done !== true) return result
    this.state = 'done'
    return DONE
  }
  private readonly failed = (error: unknown): IteratorResult<StreamChunk> => {
    this.state = 'done'
    return { done: false, value: failureFinish(error, this.request) }
  }

  constructor(
    private readonly adapter: LlmAdapter | undefined,
    private readonly request: LlmRequest,
  ) {}

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamChunk>> {
    switch (this.state) {
      case 'streaming':
        return this.pull(this.iterator as AsyncIterator<StreamChunk>)
      case 'start':
        return this.open()
      case 'opening':
        return (this.opening as Promise<unknown>).then(() => this.next())
      case 'done':
        return Promise.resolve(DONE)
    }
  }

  async return(): Promise<IteratorResult<StreamChunk>> {
    const wasStreaming = this.state === 'streaming'
    this.state = 'done'
    if (wasStreaming && this.iterator !== undefined) await release(this.iterator)
    return DONE
  }

  private pull(iterator: AsyncIterator<StreamChunk>): Promise<IteratorResult<StreamChunk>> {
    let next: Promise<IteratorResult<StreamChunk>>
    try {
      next = Promise.resolve(iterator.next())
    } catch (error) {
      return Promise.resolve(this.failed(error))
    }
    return next.then(this.settled, this.failed)
  }

  private open(): Promise<IteratorResult<StreamChunk>> {
    const adapter = this.adapter
    if (adapter === undefined) {
      this.state = 'done'
      const message = `no adapter registered for provider "${this.request.provider}"`
      return Promise.resolve({
        done: false,
        value: finish(llmFailure(LlmErrorCode.NO_ADAPTER, message), false),
      })
    }
    this.state = 'opening'
    const opened = (async (): Promise<IteratorResult<StreamChunk>> => {
      let iterator: AsyncIterator<StreamChunk>
      try {
        // An `async stream()` returns a promise; await covers both it and a plain iterable.
        const produced: unknown = await (adapter.stream(this.request) as unknown)
        if (!isAsyncIterable(produced)) throw new TypeError('stream() did not return an async iterable')
        iterator = produced[Symbol.asyncIterator]()
      } catch (error) {
        if (this.state === 'done') return DONE
        return this.failed(error)
      }
      this.opening = undefined
      if (this.state === 'done') {
        // Stopped while the stream was being opened: release it unread.
        void release(iterator)
        return DONE
      }
      this.iterator = iterator
      this.state = 'streaming'
      return this.pull(iterator)
    })()
    this.opening = opened
    return opened
  }
}

/**
 * Lets the adapter release its connection when the consumer stopped early. Nobody is left to hear
 * a failure of that cleanup, and the adapter contract forbids throwing, so it is dropped.
 */
async function release(iterator: AsyncIterator<StreamChunk>): Promise<void> {
  await (async () => iterator.return?.())().catch(() => undefined)
}

function finish(failure: LlmFailure, aborted: boolean): StreamChunk {
  return Object.freeze({
    type: 'finish',
    reason: Object.freeze(aborted ? { kind: 'aborted', failure } : { kind: 'error', failure }),
  })
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message
  return typeof error === 'string' ? error : String(error)
}

function failureFinish(error: unknown, request: LlmRequest): StreamChunk {
  const signal = request.signal
  if (signal?.aborted === true) {
    const reason = describe(signal.reason ?? error)
    return finish(
      llmFailure(LlmErrorCode.ABORTED, `request to "${request.provider}" aborted: ${reason}`),
      true,
    )
  }
  if (error instanceof LlmError) return finish(error.failure, error.failure.code === LlmErrorCode.ABORTED)
  return finish(
    llmFailure(LlmErrorCode.ADAPTER_THREW, `adapter for "${request.provider}" threw: ${describe(error)}`),
    false,
  )
}

function isAsyncIterable(value: unknown): value is AsyncIterable<StreamChunk> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  )
}
