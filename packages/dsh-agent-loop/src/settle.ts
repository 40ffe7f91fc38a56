/**
 * Bounded waits for code the loop does not control (tool bodies, post-processing listeners): a
 * timeout, and a grace period after cancellation after which the work is abandoned.
 */

/** Closed: how a bounded wait ended. */
export type Settled<T> =
  | { readonly kind: 'value'; readonly value: T }
  | { readonly kind: 'threw'; readonly error: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'abandoned' }

/** Limits of `settleWithin`. */
export interface SettleLimits {
  /** Aborting it starts the grace period. */
  readonly signal: AbortSignal
  /** Milliseconds from the start until the wait ends `timeout`; `Infinity` for none. */
  readonly timeoutMs: number
  /** Milliseconds after `signal` aborts until the wait ends `abandoned`. */
  readonly graceMs: number
  /** Called when the timeout fires, before the wait ends (to abort the work's own signal). */
  readonly onTimeout?: () => void
}

const TIMEOUT: Settled<never> = Object.freeze({ kind: 'timeout' })
const ABANDONED: Settled<never> = Object.freeze({ kind: 'abandoned' })

/**
 * Runs `work` and resolves with how it ended: its value, what it threw (synchronously or as a
 * rejection, Error or not), `timeout`, or `abandoned` when `signal` aborted and the work did not
 * settle within `graceMs`. Never rejects. Whatever the work does after the wait ended is ignored
 * (a late rejection included), so a caller never sees a late result.
 */
export function settleWithin<T>(work: () => T | Promise<T>, limits: SettleLimits): Promise<Settled<T>> {
  const { signal, timeoutMs, graceMs } = limits
  return new Promise<Settled<T>>((resolve) => {
    let done = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let grace: ReturnType<typeof setTimeout> | undefined
    const onAbort = () => {
      grace ??= setTimeout(() => finish(ABANDONED), graceMs)
    }
    const finish = (settled: Settled<T>) => {
      if (done) return
      done = true
      if (timer !== undefined) clearTimeout(timer)
      if (grace !== undefined) clearTimeout(grace)
      signal.removeEventListener('abort', onAbort)
      resolve(settled)
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(() => {
        limits.onTimeout?.()
        finish(TIMEOUT)
      }, timeoutMs)
    }
    let produced: T | Promise<T>
    try {
      produced = work()
    } catch (error) {
      finish({ kind: 'threw', error })
      return
    }
    if (produced instanceof Promise) {
      produced.then(
        (value) => finish({ kind: 'value', value }),
        (error: unknown) => finish({ kind: 'threw', error }),
      )
    } else if (
      produced !== null &&
      typeof produced === 'object' &&
      typeof (produced as { then?: unknown }).then === 'function'
    ) {
      Promise.resolve(produced).then(
        (value) => finish({ kind: 'value', value }),
        (error: unknown) => finish({ kind: 'threw', error }),
      )
    } else {
      finish({ kind: 'value', value: produced })
    }
  })
}
