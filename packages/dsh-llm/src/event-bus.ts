/**
 * Hot-path dispatch. Every `ctx.waterfall(...)` or `ctx.events` access goes through cordis's tracing
 * proxies (≈20 µs a call on these machines), and the loop dispatches several extension points per
 * step. An `EventBus` resolves the events service once and skips dispatch entirely for an event that
 * has no listener, which is the common case for most extension points.
 */
import type { Context, Events } from 'cordis'
import { redact, redactError } from './redact.ts'

/** Receives each listener error of a contained notification. */
export type ListenerErrorHandler = (error: unknown, event: string) => void

type EventName = keyof Events & string
type Payload<K extends EventName> = Parameters<Events[K]> extends [...infer P, () => unknown] ? P : never
type Result<K extends EventName> = ReturnType<Events[K]>

/** The dispatch surface of one Cordis app, resolved once. */
export interface EventBus {
  /** True when at least one listener of `name` is registered. */
  has(name: EventName): boolean
  /**
   * Runs the `name` waterfall around `inner` (first registered listener outermost), exactly as
   * `ctx.waterfall(name, ...payload, inner)` does; with no listener it calls `inner()` directly.
   */
  waterfall<K extends EventName>(name: K, ...args: [...Payload<K>, () => Result<K>]): Result<K>
  /** Awaits every listener of `name` in order (`ctx.serial`); resolves at once with none. */
  serial<K extends EventName>(name: K, ...args: Parameters<Events[K]>): Promise<void>
  /**
   * Calls every listener of `name` synchronously in registration order; a listener that throws (or
   * returns a rejected promise) is reported to `onError` and the others still run. Returns how many
   * listeners were called.
   */
  emit<K extends EventName>(name: K, args: Parameters<Events[K]>, onError?: ListenerErrorHandler): number
}

interface RawEvents {
  readonly _hooks: Record<
    string | symbol,
    ReadonlyArray<{ readonly callback: (...args: never[]) => unknown }>
  >
  waterfall(...args: unknown[]): unknown
  serial(...args: unknown[]): Promise<unknown>
}

const buses = new WeakMap<object, EventBus>()

/** The `EventBus` of `ctx`'s app (one per events service, cached). */
export function eventBus(ctx: Context): EventBus {
  const events = ctx.events as unknown as RawEvents
  const hooks = events._hooks
  const cached = buses.get(hooks)
  if (cached !== undefined) return cached
  const fallback = defaultHandler(ctx)
  const bus: EventBus = {
    has: (name) => (hooks[name]?.length ?? 0) > 0,
    waterfall: (name, ...args) => {
      if ((hooks[name]?.length ?? 0) === 0) {
        const inner = args[args.length - 1] as () => never
        return inner()
      }
      return events.waterfall(name, ...args) as never
    },
    serial: async (name, ...args) => {
      if ((hooks[name]?.length ?? 0) === 0) return
      await events.serial(name, ...args)
    },
    emit: (name, args, onError = fallback) => {
      const list = hooks[name]
      if (list === undefined || list.length === 0) return 0
      const snapshot = list.slice()
      for (const hook of snapshot) {
        try {
          const result: unknown = (hook.callback as (...a: unknown[]) => unknown)(...args)
          if (result instanceof Promise) result.catch((error: unknown) => onError(error, name))
        } catch (error) {
          onError(error, name)
        }
      }
      return snapshot.length
    },
  }
  buses.set(hooks, bus)
  return bus
}

function defaultHandler(ctx: Context): ListenerErrorHandler {
  return (error, event) => {
    const shown = error instanceof Error ? redact(error.stack ?? error.message) : redactError(error)
    ctx.logger('dsh').warn(`listener of ${event} threw: %s`, shown)
  }
}
