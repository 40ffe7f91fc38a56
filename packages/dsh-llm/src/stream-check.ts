/**
 * Checks that ride a stream's own promises. An `llm/stream` listener that only inspects the chunks
 * passing through it (a grammar, a budget, a counter) returns `checkChunks(next(), check)` instead of
 * wrapping the stream in an iterator of its own: the runtime then runs the check in the reaction it
 * spends on that listener's stream anyway, blaming the listener for what fails, so a check adds no
 * promise and no microtask turn per chunk. Iterated by hand, the same iterable checks alike and
 * blames nobody.
 */
import type { StreamChunk } from './stream.ts'

/** What a listener checks in the stream it passes on (see `checkChunks`). */
export interface StreamCheck {
  /**
   * Called with each chunk, in order, before the caller receives it. An error returned is thrown in
   * place of the chunk, and the stream below is closed (its `return` awaited) first.
   */
  chunk(chunk: StreamChunk): Error | undefined
  /** Called once when the stream below has ended. An error returned is thrown in place of the end. */
  end(): Error | undefined
}

/**
 * `stream` with `check` run on every chunk. A `finish` chunk is handed on only once the stream below
 * has ended (one read ahead), so a chunk after `finish` is caught even by a caller that stops at
 * `finish`. A caller that stops early (`return`, `break`) ends the check silently. The stream below is
 * opened at the first `next()`; calls made without waiting for the previous one are answered in order.
 */
export function checkChunks(
  stream: AsyncIterable<StreamChunk>,
  check: StreamCheck,
): AsyncIterable<StreamChunk> {
  return new CheckedChunks(stream, check)
}

/** What `checkChunks` returns: recognised by the runtime's listener chain. Package-internal. */
export class CheckedChunks implements AsyncIterable<StreamChunk> {
  constructor(
    readonly source: AsyncIterable<StreamChunk>,
    readonly check: StreamCheck,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<StreamChunk> {
    return new CheckedIterator(this.source, this.check, undefined)
  }
}

type Result = IteratorResult<StreamChunk, unknown>

/** `%AsyncIteratorPrototype%`: `[Symbol.asyncIterator]` returning the iterator (and `asyncDispose` where the runtime has it). */
const ASYNC_ITERATOR_PROTOTYPE: object = Object.getPrototypeOf(
  Object.getPrototypeOf((async function* () {})()),
) as object

/**
 * The iterator of a checked stream. Written as an iterator object: a chunk costs the source's own
 * `next()` plus one reaction, which also does the check and, under a listener, the blame. `blame`
 * turns a failure into what the caller receives (the listener chain's attribution), or is absent.
 * Package-internal.
 */
export class CheckedIterator {
  private iterator: AsyncIterator<StreamChunk> | undefined
  /** True once nothing more is read from the source: it ended, threw, failed the check or was closed. */
  private over = false
  /** The source's result carrying the `finish` chunk, handed on once the source has ended. */
  private held: Result | undefined
  /** Calls made and not yet answered; while any is, a new call waits for `tail`. */
  private waiting = 0
  private tail: Promise<unknown> | undefined
  /** Called once the stream ended for the caller: a `done` answer or a failure of `next`. */
  private ended: (() => void) | undefined

  constructor(
    private readonly source: AsyncIterable<StreamChunk>,
    private readonly check: StreamCheck,
    private readonly blame: ((error: unknown) => unknown) | undefined,
  ) {}

  /** Calls `ended` once the stream ends; false (and nothing is called) when another is already set. */
  whenEnded(ended: () => void): boolean {
    if (this.ended !== undefined) return false
    this.ended = ended
    return true
  }

  next(): Promise<Result> {
    return this.enqueue(this.step)
  }

  return(value?: unknown): Promise<Result> {
    return this.enqueue(() =>
      this.close().then(
        () => this.answer(value),
        (error: unknown) => this.reject(this.blamed(error)),
      ),
    )
  }

  throw(error?: unknown): Promise<Result> {
    return this.enqueue(() =>
      this.close().then(
        () => this.reject(error),
        () => this.reject(error),
      ),
    )
  }

  /** Runs `call` now when nothing is pending, else once everything called before it is answered. */
  private enqueue(call: () => Promise<Result>): Promise<Result> {
    const run = this.waiting++ === 0 ? call() : (this.tail as Promise<unknown>).then(call, call)
    this.tail = run
    return run
  }

  private answer(value: unknown): Promise<Result> {
    this.waiting--
    return Promise.resolve(value).then((settled) => ({ done: true, value: settled }))
  }

  private reject(error: unknown): Promise<never> {
    this.waiting--
    return Promise.reject(error)
  }

  private blamed(error: unknown): unknown {
    return this.blame === undefined ? error : this.blame(error)
  }

  /** The stream ended for the caller with `error`. */
  private fail(error: unknown): Promise<never> {
    this.ended?.()
    return this.reject(this.blamed(error))
  }

  /** The next answer for the caller: the next chunk, the held finish, or the end. */
  private readonly step = (): Promise<Result> => {
    if (!this.over) return this.pull()
    this.ended?.()
    return this.answer(undefined)
  }

  private pull(): Promise<Result> {
    let pending: Promise<IteratorResult<StreamChunk>>
    try {
      this.iterator ??= this.source[Symbol.asyncIterator]()
      pending = Promise.resolve(this.iterator.next())
    } catch (error) {
      this.over = true
      return this.fail(error)
    }
    return pending.then(this.take, this.broken)
  }

  private readonly broken = (error: unknown): Promise<never> => {
    this.over = true
    return this.fail(error)
  }

  private readonly take = (result: IteratorResult<StreamChunk>): Result | Promise<Result> => {
    if (typeof result !== 'object' || result === null) {
      return this.broken(new TypeError(`Iterator result ${String(result)} is not an object`))
    }
    if (result.done === true) {
      this.over = true
      const problem = this.check.end()
      if (problem !== undefined) return this.fail(problem)
      const held = this.held
      if (held === undefined) {
        this.ended?.()
        return this.answer(undefined)
      }
      this.held = undefined
      this.waiting--
      return held
    }
    const chunk = result.value
    const problem = this.check.chunk(chunk)
    if (problem !== undefined) {
      return this.close().then(
        () => this.fail(problem),
        () => this.fail(problem),
      )
    }
    // The source's own result object goes on when it is a plain `{done: false, value}`: one that an
    // async generator (or the adapter stream) made has V8's iterator-result shape, so each promise
    // resolved with it downstream skips the lookup of a `then` member.
    const out = result.done === false ? result : { done: false as const, value: chunk }
    if (chunk.type === 'finish') {
      this.held = out
      return this.pull()
    }
    this.waiting--
    return out
  }

  /** Stops reading; closes the source (awaiting its `return`) if it was opened and had not ended. */
  private close(): Promise<unknown> {
    const open = !this.over && this.iterator !== undefined
    this.over = true
    this.held = undefined
    const iterator = this.iterator
    if (!open || iterator?.return === undefined) return Promise.resolve()
    try {
      return Promise.resolve(iterator.return())
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

Object.setPrototypeOf(CheckedIterator.prototype, ASYNC_ITERATOR_PROTOTYPE)
