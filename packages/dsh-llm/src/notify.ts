/**
 * Contained notifications. Cordis's `emit` lets one throwing listener stop the others; harness
 * notifications (`session/event`, `agent/status`, ...) must reach every listener regardless.
 */
import type { Context, Events } from 'cordis'
import { eventBus, type ListenerErrorHandler } from './event-bus.ts'

/**
 * Calls every listener of `name` synchronously, in registration order. A listener that throws (or
 * returns a rejected promise) is reported to `onError` (default: the `dsh` logger) and the
 * remaining listeners still run. Returns the number of listeners called.
 */
export function emitContained<K extends keyof Events & string>(
  ctx: Context,
  name: K,
  args: Parameters<Events[K]>,
  onError?: ListenerErrorHandler,
): number {
  return eventBus(ctx).emit(name, args, onError)
}
