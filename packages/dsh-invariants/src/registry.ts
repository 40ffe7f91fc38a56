/** `ctx.invariants`: which checks are mounted, what they have checked, and what they found. */
import { type Context, Service } from 'cordis'
import { HarnessError, type LlmRequest } from 'dsh-llm'
import type { CheckSink } from './check-sink.ts'
import { InvariantError, InvariantErrorCode } from './errors.ts'
import { installLogGrammar } from './online/log-guard.ts'
import { installRequestBoundary } from './online/request-boundary.ts'
import { installStreamGrammar } from './online/stream-listener.ts'
import type { CheckName, InvariantCounters, InvariantsConfig, Violation } from './types.ts'

declare module 'cordis' {
  interface Context {
    invariants: InvariantRegistry
  }
  interface Events {
    /**
     * Notification (emit): a request reached an adapter outside any loop step — a plugin calling a
     * model on its own. Allowed, not re-derived; counted as `requestsOutsideSteps`.
     */
    'invariants/request-outside-step'(request: LlmRequest): void
  }
}

/** Every check this package ships, in the order they are documented. */
export const CHECK_NAMES: readonly CheckName[] = Object.freeze([
  'request-reconstruction',
  'log-grammar',
  'stream-grammar',
])

/**
 * Resolves the mounted checks from a config: all of them, narrowed by `only`, minus `skip`. Throws
 * `HarnessError` `INVALID_OPTIONS` naming any unknown check (and listing the known ones).
 */
export function resolveChecks(config: InvariantsConfig = {}): readonly CheckName[] {
  for (const key of ['only', 'skip'] as const) {
    const names: unknown = config[key]
    if (names === undefined) continue
    if (!Array.isArray(names)) {
      throw new HarnessError(
        InvariantErrorCode.INVALID_OPTIONS,
        `invariants: config.${key} must be an array of check names`,
      )
    }
    for (const name of names) {
      if (!(CHECK_NAMES as readonly unknown[]).includes(name)) {
        throw new HarnessError(
          InvariantErrorCode.INVALID_OPTIONS,
          `invariants: config.${key} names unknown check ${JSON.stringify(name)}; known checks: ${CHECK_NAMES.join(', ')}`,
        )
      }
    }
  }
  const only = config.only
  const skip = config.skip ?? []
  return Object.freeze(
    CHECK_NAMES.filter((name) => (only === undefined || only.includes(name)) && !skip.includes(name)),
  )
}

type Observer = (registry: InvariantRegistry) => void
const OBSERVERS = Symbol.for('dsh-invariants/registry-observers')

function observers(): Set<Observer> {
  const holder = globalThis as { [OBSERVERS]?: Set<Observer> }
  holder[OBSERVERS] ??= new Set()
  return holder[OBSERVERS]
}

/**
 * Calls `observer` with every `InvariantRegistry` constructed from now on (in any copy of this package
 * loaded in the process); returns a disposer. The vitest helper uses it to find every registry a test
 * mounted.
 */
export function observeRegistries(observer: Observer): () => void {
  const set = observers()
  set.add(observer)
  return () => {
    set.delete(observer)
  }
}

/**
 * The invariants service (`ctx.invariants`), mounted as the `Invariants` plugin with an
 * `InvariantsConfig`. Mounting it turns the checks on; unloading the plugin turns them off. Needs
 * `llm` (the `llm/stream` listener) and `sessions` (the pre-commit guard, and the logs that requests
 * are re-derived from).
 *
 * A check that finds a violation records it in `violations` and throws an `InvariantError` to the
 * caller of the offending operation (the `append`, the `ctx.llm.stream` call or its iteration).
 */
export class InvariantRegistry extends Service {
  static inject = ['llm', 'sessions']

  /** The mounted checks. */
  readonly checks: readonly CheckName[]
  private readonly counts = {
    requestsChecked: 0,
    requestsOutsideSteps: 0,
    eventsChecked: 0,
    streamsChecked: 0,
  }
  private recorded: Violation[] = []

  constructor(ctx: Context, config: InvariantsConfig = {}) {
    super(ctx, 'invariants')
    this.checks = resolveChecks(config ?? {})
    const sink: CheckSink = {
      count: (counter) => {
        this.counts[counter]++
      },
      fail: (violation) => {
        const frozen = Object.freeze({ ...violation })
        this.recorded.push(frozen)
        return new InvariantError(frozen)
      },
    }
    if (this.isEnabled('request-reconstruction')) installRequestBoundary(ctx, sink)
    if (this.isEnabled('stream-grammar')) installStreamGrammar(ctx, sink)
    if (this.isEnabled('log-grammar')) installLogGrammar(ctx, sink)
    for (const observer of observers()) observer(this)
  }

  /** True when `check` is mounted. */
  isEnabled(check: CheckName): boolean {
    return this.checks.includes(check)
  }

  /** A frozen snapshot of the counters. */
  get counters(): InvariantCounters {
    return Object.freeze({ ...this.counts })
  }

  /** Every violation recorded since mounting (or the last `takeViolations`/`clearViolations`), in order. */
  get violations(): readonly Violation[] {
    return Object.freeze([...this.recorded])
  }

  /** Returns the recorded violations and forgets them: for tests that break a check on purpose. */
  takeViolations(): readonly Violation[] {
    const taken = this.violations
    this.recorded = []
    return taken
  }

  /** Forgets the recorded violations. */
  clearViolations(): void {
    this.recorded = []
  }
}
