/**
 * Cooperative cancellation: one controller per turn whose first cause wins, and helpers that cut
 * an await short when the turn's signal aborts.
 */
import { AgentLoopError, AgentLoopErrorCode } from '../errors.ts'

/** The cancellation of one turn. `cancel` records the first cause and aborts the signal. */
export class TurnCancellation {
  private readonly controller = new AbortController()
  private firstCause: string | undefined

  /** Aborted once the turn is cancelled. */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** The first cause given, or `undefined` while not cancelled. */
  get cause(): string | undefined {
    return this.firstCause
  }

  /** Cancels with `cause`; returns false (and keeps the first cause) when already cancelled. */
  cancel(cause: string): boolean {
    if (this.firstCause !== undefined) return false
    this.firstCause = cause
    this.controller.abort(new AgentLoopError(AgentLoopErrorCode.ABORTED, `turn cancelled: ${cause}`))
    return true
  }
}

/** Thrown by `untilAborted` and `sleep` when the signal aborts first. */
export function abortedError(signal: AbortSignal): AgentLoopError {
  const reason: unknown = signal.reason
  return reason instanceof AgentLoopError ? reason : new AgentLoopError(AgentLoopErrorCode.ABORTED, 'aborted')
}

/** True when `error` is the cancellation error of an aborted signal. */
export function isAbort(error: unknown): boolean {
  return error instanceof AgentLoopError && error.code === AgentLoopErrorCode.ABORTED
}

const watchers = new WeakMap<AbortSignal, Set<() => void>>()

/**
 * The abort watchers of `signal`: callbacks in this set run once, in insertion order, when the
 * signal aborts. Every watcher of a signal shares one `abort` listener, registered on first use, so
 * watching an await costs a set insertion and deletion instead of an EventTarget listener each
 * time (the loop races several awaits per step against the turn's signal). Use it only while
 * `signal` is not aborted: a callback added afterwards never runs.
 */
export function abortWatchers(signal: AbortSignal): Set<() => void> {
  let set = watchers.get(signal)
  if (set === undefined) {
    const created = new Set<() => void>()
    signal.addEventListener(
      'abort',
      () => {
        for (const callback of created) callback()
        created.clear()
      },
      { once: true },
    )
    watchers.set(signal, created)
    set = created
  }
  return set
}

/** Throws the abort error when `signal` is aborted: the check an await on a quiet extension point makes. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortedError(signal)
}

/**
 * Awaits `work`, but rejects with the abort error as soon as `signal` aborts (checked before and
 * during the wait). A late rejection of the abandoned `work` is swallowed.
 */
export function untilAborted<T>(work: Promise<T> | T, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    if (work instanceof Promise) work.catch(() => undefined)
    return Promise.reject(abortedError(signal))
  }
  if (!(work instanceof Promise)) return Promise.resolve(work)
  const watching = abortWatchers(signal)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal))
    watching.add(onAbort)
    work.then(
      (value) => {
        watching.delete(onAbort)
        resolve(value)
      },
      (error: unknown) => {
        watching.delete(onAbort)
        reject(error)
      },
    )
  })
}

/** Waits `ms` milliseconds; rejects with the abort error if `signal` aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return untilAborted(
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      signal.addEventListener('abort', () => clearTimeout(timer), { once: true })
    }),
    signal,
  )
}
