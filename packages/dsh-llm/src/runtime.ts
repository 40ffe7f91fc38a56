/** `ctx.llm`: the adapter registry and the `llm/stream` waterfall around every model call. */
import { type Context, Service } from 'cordis'
import { adapterStream } from './adapter-stream.ts'
import { HarnessError, LlmErrorCode } from './errors.ts'
import type { LlmAdapter, LlmRequest } from './request.ts'
import type { StreamChunk } from './stream.ts'
import { blamedWaterfall, type StreamHook } from './stream-listeners.ts'

declare module 'cordis' {
  interface Context {
    llm: LlmRuntime
  }
  interface Events {
    /**
     * Waterfall around every model call. A listener receives the request and `next` (the rest of
     * the chain, ending in the adapter) and returns the stream its caller sees — usually a wrapper
     * around `next()`. First registered is outermost; `{prepend: true}` makes a listener outermost.
     */
    'llm/stream'(request: LlmRequest, next: () => AsyncIterable<StreamChunk>): AsyncIterable<StreamChunk>
  }
}

/**
 * A check of each request at the adapter boundary (see `LlmRuntime.guard`): returns to let it through,
 * throws to stop it.
 */
export type AdapterGuard = (request: LlmRequest) => void

/**
 * The model runtime service (`ctx.llm`). Holds one adapter per provider name and runs every
 * model call through the `llm/stream` waterfall.
 */
export class LlmRuntime extends Service {
  private readonly adapters = new Map<string, LlmAdapter>()
  private readonly guards = new Set<AdapterGuard>()
  private readonly hooks: Readonly<Record<string, readonly StreamHook[] | undefined>>

  constructor(ctx: Context) {
    super(ctx, 'llm')
    // Resolved once: cordis keeps each event's listeners (with their fibers) in `_hooks`.
    this.hooks = (ctx.events as unknown as { _hooks: LlmRuntime['hooks'] })._hooks
  }

  /**
   * Registers `adapter` for each provider name. The registration is an effect of the calling
   * plugin: it goes away when that plugin unloads, or when the returned disposer is called.
   * Throws `HarnessError` `DUPLICATE_ADAPTER` if a provider already has an adapter (or is listed
   * twice), and `INVALID_OPTIONS` for an empty provider name; nothing is registered then.
   */
  registerAdapter(providers: string | readonly string[], adapter: LlmAdapter): () => void {
    const names = typeof providers === 'string' ? [providers] : [...providers]
    const seen = new Set<string>()
    for (const name of names) {
      if (typeof name !== 'string' || name === '') {
        throw new HarnessError(
          LlmErrorCode.INVALID_OPTIONS,
          `registerAdapter: provider names must be non-empty strings, got ${JSON.stringify(name)}`,
        )
      }
      if (this.adapters.has(name) || seen.has(name)) {
        throw new HarnessError(
          LlmErrorCode.DUPLICATE_ADAPTER,
          `registerAdapter: provider "${name}" already has an adapter`,
        )
      }
      seen.add(name)
    }
    const adapters = this.adapters
    const dispose = this.ctx.effect(
      () => {
        for (const name of names) adapters.set(name, adapter)
        return () => {
          for (const name of names) if (adapters.get(name) === adapter) adapters.delete(name)
        }
      },
      `llm.registerAdapter(${names.join(', ')})`,
    )
    return () => {
      dispose()
    }
  }

  /**
   * Adds a check called with every request at the last boundary: when the `llm/stream` chain reaches
   * its innermost step, just before the adapter is looked up and called. A guard that throws stops
   * the request (the adapter is not called); the error propagates out of the `next()` call that
   * reached the adapter, like a listener's error. An effect of the calling plugin; returns a disposer.
   */
  guard(check: AdapterGuard): () => void {
    const guards = this.guards
    const dispose = this.ctx.effect(() => {
      guards.add(check)
      return () => {
        guards.delete(check)
      }
    }, 'llm adapter guard')
    return () => {
      dispose()
    }
  }

  /** The adapter registered for `provider`, if any. */
  adapterFor(provider: string): LlmAdapter | undefined {
    return this.adapters.get(provider)
  }

  /** The provider names that currently have an adapter, in registration order. */
  providers(): readonly string[] {
    return Object.freeze([...this.adapters.keys()])
  }

  /**
   * Streams one model call through the `llm/stream` waterfall. The innermost step looks up the
   * adapter for `request.provider` when the chain reaches it and normalises its failures, so the
   * stream it yields always keeps the adapter contract:
   * - no adapter: a single `finish {kind: 'error'}` with code `NO_ADAPTER`;
   * - the adapter throws, rejects or throws mid-iteration: whatever it yielded, then one terminal
   *   `finish` — `{kind: 'aborted'}` (code `ABORTED`) if `request.signal` is aborted, else
   *   `{kind: 'error'}` carrying the thrown `LlmError`'s failure or code `ADAPTER_THREW`.
   *
   * Guards (`guard`) run when the chain reaches the innermost step, with the request as it arrives
   * there; their errors propagate like a listener's (a `HarnessError` as it is).
   * Errors thrown by `llm/stream` listeners themselves are NOT contained: they propagate to the
   * caller, synchronously from this call or from the iteration, so a checker wrapping the stream
   * can fail loudly. They are blamed on the listener's plugin: a `HarnessError` propagates as it is
   * (`streamListenerOf(error)` names the plugin), anything else as a `StreamListenerError`
   * (`STREAM_LISTENER_FAILED`) naming it.
   */
  stream(request: LlmRequest): AsyncIterable<StreamChunk> {
    const inner = (): AsyncIterable<StreamChunk> => {
      for (const guard of this.guards) guard(request)
      return adapterStream(this.adapters.get(request.provider), request)
    }
    const hooks = this.hooks['llm/stream']
    if (hooks === undefined || hooks.length === 0) return inner()
    return blamedWaterfall(hooks.slice(), request, inner)
  }
}
