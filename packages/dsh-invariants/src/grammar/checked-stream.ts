/**
 * `checkedStream`: a stream under the stream grammar, as the caller iterates it. Written as an
 * iterator object rather than an async generator: a generator's `yield` and `for await` cost a few
 * promises and microtask turns per chunk, where this costs the source's own `next()` plus one reaction.
 * It answers `next`, `return` and `throw` as the generator it replaces did (`checked-stream.test.ts`).
 */
import type { StreamChunk } from 'dsh-llm'
import { StreamGrammar } from './stream-grammar.ts'

type Result = IteratorResult<StreamChunk, unknown>

/** `%AsyncIteratorPrototype%`: `[Symbol.asyncIterator]` returning the iterator (and `asyncDispose` where the runtime has it). */
const ASYNC_ITERATOR_PROTOTYPE: object = Object.getPrototypeOf(
  Object.getPrototypeOf((async function* () {})()),
) as object

/**
 * Wraps `source` so every chunk is checked by a fresh `StreamGrammar` before the consumer sees it.
 * On a violation `fail(message)` is called and must return the error to throw; the iterator then
 * throws it in place of the offending chunk (or at the end, for a missing `finish`) and closes the
 * source. A `finish` chunk is delivered only once the source has ended, so a chunk after `finish` is
 * caught even when the consumer would stop at `finish`. A consumer that stops early (`break`) ends
 * the check silently. The source is opened at the first `next()`; calls made without waiting for the
 * previous one are answered in order.
 */
export function checkedStream(
  source: AsyncIterable<StreamChunk>,
  fail: (message: string) => Error,
): AsyncGenerator<StreamChunk> {
  return new CheckedStream(source, fail) as unknown as AsyncGenerator<StreamChunk>
}

class CheckedStream {
  private readonly grammar = new StreamGrammar()
  private iterator: AsyncIterator<StreamChunk> | undefined
  /** True once nothing more is read from the source: it ended, threw, broke the grammar or was closed. */
  private over = false
  /** The source's result carrying the `finish` chunk, delivered once the source has ended. */
  private held: Result | undefined
  /** Calls made and not yet answered; while any is, a new call waits for `tail`. */
  private waiting = 0
  private tail: Promise<unknown> | undefined

  constructor(
    private readonly source: AsyncIterable<StreamChunk>,
    private readonly fail: (message: string) => Error,
  ) {}

  next(): Promise<Result> {
    return this.enqueue(() => this.step())
  }

  return(value?: unknown): Promise<Result> {
    return this.enqueue(() =>
      this.close().then(
        () => this.answer(value),
        (error: unknown) => this.reject(error),
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

  /** The next result for the consumer: the next chunk, the held finish, or the end. */
  private step(): Promise<Result> {
    return this.over ? this.answer(undefined) : this.pull()
  }

  private pull(): Promise<Result> {
    let pending: Promise<IteratorResult<StreamChunk>>
    try {
      this.iterator ??= this.source[Symbol.asyncIterator]()
      pending = Promise.resolve(this.iterator.next())
    } catch (error) {
      this.over = true
      return this.reject(error)
    }
    return pending.then(this.take, this.broken)
  }

  private readonly broken = (error: unknown): Promise<never> => {
    this.over = true
    return this.reject(error)
  }

  private readonly take = (result: IteratorResult<StreamChunk>): Result | Promise<Result> => {
    if (typeof result !== 'object' || result === null) {
      return this.broken(new TypeError(`Iterator result ${String(result)} is not an object`))
    }
    if (result.done === true) {
      this.over = true
      const held = this.held
      if (held !== undefined) {
        this.held = undefined
        this.waiting--
        return held
      }
      const problem = this.grammar.end()
      if (problem !== undefined) return this.reject(this.fail(problem))
      return this.answer(undefined)
    }
    const chunk = result.value
    const problem = this.grammar.push(chunk)
    if (problem !== undefined) {
      const error = this.fail(problem)
      return this.close().then(
        () => this.reject(error),
        () => this.reject(error),
      )
    }
    // The source's own result object goes on when it is a plain `{done: false, value}`: one that
    // an async generator (or the adapter stream) made has V8's iterator-result shape, so each
    // promise resolved with it downstream skips the lookup of a `then` member.
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

Object.setPrototypeOf(CheckedStream.prototype, ASYNC_ITERATOR_PROTOTYPE)
