import { symbols } from 'cordis'

/**
 * The object behind cordis's tracing proxy. A service read from a context (`ctx.llm`) is a proxy
 * that attributes effects to the reading plugin; every property access through it costs
 * microseconds. Hot paths that only call pure or bookkeeping methods (`stream`, `select`, `get`)
 * resolve the service once and call the original. Do not use it for calls that create effects
 * (`registerAdapter`, `register`): those must stay attributed to the calling plugin.
 */
export function untraced<T extends object>(service: T): T {
  const original: unknown = (service as { readonly [key: symbol]: unknown })[symbols.original]
  return (original ?? service) as T
}
