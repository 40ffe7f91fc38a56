/**
 * Contained notifications. Cordis's `emit` lets one throwing listener stop the others; harness
 * notifications (`session/event`, `agent/status`, ...) must reach every listener regardless.
 */
import type { Context, Events } from 'cordis'

/** Receives each listener error of a contained notification. */
export type ListenerErrorHandler = (error: unknown, event: string) => void

/**
 * Calls every listener of `name` synchronously, in registration order. A listener that throws (or
 * returns a rejected promise) is reported to `onError` and the remaining listeners still run.
 * Returns the number of listeners called.
 */
export function emitContained<K extends keyof Events & string>(
  ctx: Context,
  name: K,
  args: Parameters<Events[K]>,
  onError: ListenerErrorHandler = defaultListenerErrorHandler(ctx),
): number {
  // `dispatch` resolves the listener list exactly as `emit` does (fiber filters included) but hands
  // the callbacks back instead of calling them, so each call can be contained.
  const callbacks = ctx.events.dispatch('emit', [name, ...args])
  for (const callback of callbacks) {
    try {
      const result: unknown = callback(...args)
      if (result instanceof Promise) result.catch((error: unknown) => onError(error, name))
    } catch (error) {
      onError(error, name)
    }
  }
  return callbacks.length
}

function defaultListenerErrorHandler(ctx: Context): ListenerErrorHandler {
  return (error, event) => {
    ctx.logger('dsh').warn(`listener of ${event} threw: %s`, error instanceof Error ? error.stack : error)
  }
}
