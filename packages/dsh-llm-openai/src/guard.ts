/** The abort controller of one call: the caller's signal and the inactivity timer in one place. */
import type { CallCause } from './errors.ts'

/**
 * The abort controller of one call: fires on the caller's signal (cause `aborted`) or when the
 * inactivity timer runs out (cause `timeout`); the first cause wins. `dispose` aborts whatever is
 * still open, which releases the connection when the consumer stops early.
 */
export class CallGuard {
  readonly #controller = new AbortController()
  readonly #signal: AbortSignal | undefined
  readonly #timeoutMs: number
  readonly #onAbort = (): void => this.#fire('aborted')
  #timer: ReturnType<typeof setTimeout> | undefined
  #cause: CallCause

  constructor(signal: AbortSignal | undefined, timeoutMs: number) {
    this.#signal = signal
    this.#timeoutMs = timeoutMs
    signal?.addEventListener('abort', this.#onAbort, { once: true })
  }

  /** The signal to hand to `fetch`. */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** Why the controller fired, or `undefined` while it has not. */
  get cause(): CallCause {
    return this.#cause
  }

  /** (Re)starts the inactivity timer. */
  arm(): void {
    this.disarm()
    this.#timer = setTimeout(() => this.#fire('timeout'), this.#timeoutMs)
  }

  /** Stops the inactivity timer. */
  disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** Stops the timer, detaches from the caller's signal and aborts whatever is still in flight. */
  dispose(): void {
    this.disarm()
    this.#signal?.removeEventListener('abort', this.#onAbort)
    if (!this.#controller.signal.aborted) this.#controller.abort()
  }

  #fire(cause: 'aborted' | 'timeout'): void {
    if (this.#cause !== undefined) return
    this.#cause = cause
    this.disarm()
    this.#controller.abort()
  }
}
