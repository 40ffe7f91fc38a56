/**
 * Bounded waits for code the loop does not control (tool bodies, post-processing listeners): a
 * timeout, and a grace period after cancellation after which the work is abandoned.
 */
import { abortWatchers } from './cancel.ts'
import { type Deadline, deadline } from './deadlines.ts'

/** Closed: how a bounded wait ended. */
export type Settled<T> =
  | { readonly kind: 'value'; readonly value: T }
  | { readonly kind: 'threw'; readonly error: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'abandoned' }

/** Limits of `settleWithin`. */
export interface SettleLimits {
  /** Aborting it starts the grace period. Watched through `abortWatchers` (call it before it aborts, or already aborted). */
  readonly signal: AbortSignal
  /** Milliseconds from the start until the wait ends `timeout`; `Infinity` for none. */
  readonly timeoutMs: number
  /** Milliseconds after `signal` aborts until the wait ends `abandoned`. */
  readonly graceMs: number
  /** Called when the timeout fires, before the wait ends (to abort the work's own signal). */
  readonly onTimeout?: () => void
  /** Called once when the wait ends, however it ends, before the promise resolves. */
  readonly onEnd?: () => void
}

const TIMEOUT: Settled<never> = Object.freeze({ kind: 'timeout' })
const ABANDONED: Settled<never> = Object.freeze({ kind: 'abandoned' })

/**
 * Awaits `work` (already started) and resolves with how it ended: its value, its rejection (Error
 * or not), `timeout`, or `abandoned` when `signal` aborted and the work did not settle within
 * `graceMs`. Never rejects. Whatever the work does after the wait ended is ignored (a late
 * rejection included), so a caller never sees a late result.
 */
export function settleWithin<T>(work: PromiseLike<T>, limits: SettleLimits): Promise<Settled<T>> {
  const { signal, timeoutMs, graceMs } = limits
  return new Promise<Settled<T>>((resolve) => {
    let done = false
    let timer: Deadline | undefined
    let grace: ReturnType<typeof setTimeout> | undefined
    const watching = signal.aborted ? undefined : abortWatchers(signal)
    const onAbort = () => {
      grace ??= setTimeout(() => finish(ABANDONED), graceMs)
    }
    const finish = (settled: Settled<T>) => {
      if (done) return
      done = true
      timer?.cancel()
      if (grace !== undefined) clearTimeout(grace)
      watching?.delete(onAbort)
      limits.onEnd?.()
      resolve(settled)
    }
    if (watching === undefined) onAbort()
    else watching.add(onAbort)
    if (Number.isFinite(timeoutMs)) {
      timer = deadline(timeoutMs, () => {
        limits.onTimeout?.()
        finish(TIMEOUT)
      })
    }
    Promise.resolve(work).then(
      (value) => finish({ kind: 'value', value }),
      (error: unknown) => finish({ kind: 'threw', error }),
    )
  })
}

/**
 * Runs `work` and reports how it ended. A synchronous return or throw is reported synchronously,
 * with no timer armed; a thenable is awaited by `settleWithin` with `limits`.
 */
export function runBounded<T>(
  work: () => T | PromiseLike<T>,
  limits: SettleLimits,
): Settled<T> | Promise<Settled<T>> {
  let produced: T | PromiseLike<T>
  try {
    produced = work()
  } catch (error) {
    limits.onEnd?.()
    return { kind: 'threw', error }
  }
  if (!isThenable(produced)) {
    limits.onEnd?.()
    return { kind: 'value', value: produced }
  }
  return settleWithin(produced, limits)
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}
