/**
 * The innermost stream of every model call: the adapter's own iterator under the adapter contract
 * (failures become one terminal `finish`). Written as an iterator object rather than an async
 * generator: a chunk then costs one `then` on the adapter's promise instead of a generator resume,
 * an await and a yield, and this layer sits on the path of every chunk of every step.
 */
import { LlmError, LlmErrorCode, type LlmFailure, llmFailure } from './errors.ts'
import { redactFailure } from './redact.ts'
import type { LlmAdapter, LlmRequest } from './request.ts'
import type { StreamChunk } from './stream.ts'

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
  if (error instanceof LlmError) {
    return finish(redactFailure(error.failure), error.failure.code === LlmErrorCode.ABORTED)
  }
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

/**
 * The adapter's `finish` result with its failure redacted (`redactFailure`): whatever an adapter
 * put in a failure message, no credential goes on to the log, spans or the caller. Other chunks,
 * and a finish that needs no redaction, are returned as they came.
 */
function redactedFinish(result: IteratorResult<StreamChunk>): IteratorResult<StreamChunk> {
  const chunk = result.value
  if (chunk.type !== 'finish') return result
  const failure = (chunk.reason as { failure?: LlmFailure }).failure
  if (typeof failure !== 'object' || failure === null || typeof failure.message !== 'string') return result
  const clean = redactFailure(failure)
  if (clean === failure) return result
  return {
    done: false,
    value: Object.freeze({ ...chunk, reason: Object.freeze({ ...chunk.reason, failure: clean }) }),
  }
}

/** Lets the adapter release its connection; nobody is left to hear a failure of that cleanup. */
async function release(iterator: AsyncIterator<StreamChunk>): Promise<void> {
  try {
    await iterator.return?.()
  } catch {
    // The adapter contract forbids throwing here; a broken cleanup is dropped.
  }
}

/**
 * `new`: the adapter is not called yet; `opening`: the first `next` is calling it; `open`: reading
 * its iterator; `closed`: ended (completed, failed, or returned), every `next` is done.
 */
type Phase = 'new' | 'opening' | 'open' | 'closed'

/**
 * The stream of `adapter` (undefined: none registered) for `request`, as an async generator over
 * the adapter would give it: the adapter is called at the first `next`; the stream always keeps the
 * adapter contract — no adapter gives a single `NO_ADAPTER` finish, and the adapter throwing or
 * rejecting (when called or mid-iteration) gives whatever it yielded, then one terminal `finish`
 * (`aborted` when `request.signal` is aborted). A `return` before the end waits for a pending
 * `next`, then returns the adapter's iterator (its failure is dropped). Each chunk arrives in the
 * iterator result object the adapter produced.
 */
export function adapterStream(
  adapter: LlmAdapter | undefined,
  request: LlmRequest,
): AsyncIterable<StreamChunk> {
  return new AdapterStream(adapter, request)
}

/** A fresh end-of-stream result (a generator's are fresh too: a consumer may keep or change them). */
function done(value?: unknown): IteratorResult<StreamChunk> {
  return { done: true, value }
}

class AdapterStream implements AsyncIterable<StreamChunk>, AsyncIterator<StreamChunk> {
  private phase: Phase = 'new'
  private iterator: AsyncIterator<StreamChunk> | undefined
  /** `next` calls not yet answered, and the promise of the latest one. */
  private pending = 0
  private latest: Promise<unknown> | undefined

  constructor(
    private readonly adapter: LlmAdapter | undefined,
    private readonly request: LlmRequest,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<StreamChunk> {
    return this
  }

  next(): Promise<IteratorResult<StreamChunk>> {
    switch (this.phase) {
      case 'open':
        return this.read()
      case 'closed':
        return Promise.resolve(done())
      case 'new':
        return this.track(this.open())
      case 'opening':
        // Queued behind the first `next`, as a generator queues requests while it runs.
        return this.track(this.after(() => this.next()))
    }
  }

  return(value?: unknown): Promise<IteratorResult<StreamChunk>> {
    if (this.pending > 0) return this.after(() => this.return(value))
    const iterator = this.iterator
    this.close()
    if (iterator === undefined) return Promise.resolve(done(value))
    return release(iterator).then(() => done(value))
  }

  /** Ends the stream like `return`, then rejects with `error` (a generator's `throw`). */
  throw(error?: unknown): Promise<IteratorResult<StreamChunk>> {
    return this.return().then(() => Promise.reject(error))
  }

  /** One chunk of the open adapter iterator. */
  private read(): Promise<IteratorResult<StreamChunk>> {
    const iterator = this.iterator as AsyncIterator<StreamChunk>
    let produced: Promise<IteratorResult<StreamChunk>>
    try {
      produced = iterator.next()
    } catch (error) {
      return this.track(Promise.resolve(this.failed(error)))
    }
    this.pending++
    const answer = Promise.resolve(produced).then(this.step, this.threw)
    this.latest = answer
    return answer
  }

  private readonly step = (result: IteratorResult<StreamChunk>): IteratorResult<StreamChunk> => {
    this.pending--
    let ended: boolean | undefined
    try {
      ended = result.done
    } catch (error) {
      // Not an iterator result: the contract is broken beyond a failure chunk; end and reject.
      this.abandon()
      throw error
    }
    if (ended === true) {
      this.close()
      return done()
    }
    if (this.phase === 'closed') return done()
    // The adapter's own result object: one allocation per chunk fewer than a generator's yield.
    return result.value.type === 'finish' ? redactedFinish(result) : result
  }

  private readonly threw = (error: unknown): IteratorResult<StreamChunk> => {
    this.pending--
    if (this.phase === 'closed') return done()
    return this.failed(error)
  }

  /** The terminal `finish` for `error`; the stream is over after it (the adapter is not returned). */
  private failed(error: unknown): IteratorResult<StreamChunk> {
    this.close()
    return { done: false, value: failureFinish(error, this.request) }
  }

  private async open(): Promise<IteratorResult<StreamChunk>> {
    const { adapter, request } = this
    if (adapter === undefined) {
      this.close()
      const message = `no adapter registered for provider "${request.provider}"`
      return { done: false, value: finish(llmFailure(LlmErrorCode.NO_ADAPTER, message), false) }
    }
    this.phase = 'opening'
    try {
      // An `async stream()` returns a promise; await covers both it and a plain iterable.
      const produced: unknown = await (adapter.stream(request) as unknown)
      if (!isAsyncIterable(produced)) throw new TypeError('stream() did not return an async iterable')
      this.iterator = produced[Symbol.asyncIterator]()
    } catch (error) {
      return this.failed(error)
    }
    this.phase = 'open'
    return this.read()
  }

  /** Counts `answer` as a pending `next` until it settles. */
  private track<T>(answer: Promise<T>): Promise<T> {
    this.pending++
    const settle = () => {
      this.pending--
    }
    answer.then(settle, settle)
    this.latest = answer
    return answer
  }

  /** Runs `then` once the latest pending `next` has settled. */
  private after<T>(then: () => Promise<T>): Promise<T> {
    const latest = this.latest ?? Promise.resolve()
    return latest.then(then, then)
  }

  private close(): void {
    this.phase = 'closed'
    this.iterator = undefined
  }

  private abandon(): void {
    const iterator = this.iterator
    this.close()
    if (iterator !== undefined) void release(iterator)
  }
}
