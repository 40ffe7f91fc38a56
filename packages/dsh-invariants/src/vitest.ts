/**
 * `dsh-invariants/vitest`: run a vitest suite with every check mounted. `installInvariantGuard()` fails
 * any test after which a registry holds a violation the test did not take, and records how much the
 * checks did; `createCheckedApp()` / `mountInvariants(app)` mount the checks.
 */
import { appendFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Context } from 'cordis'
import { LlmRuntime } from 'dsh-llm'
import { Sessions, type SessionsConfig } from 'dsh-session'
import { afterAll, afterEach } from 'vitest'
import { formatViolation } from './errors.ts'
import { InvariantRegistry, observeRegistries } from './registry.ts'
import type { InvariantCounters, InvariantsConfig } from './types.ts'

/**
 * Where each test file's totals go, one JSON line per file: `$DSH_INVARIANTS_TOTALS`, else
 * `<os tmpdir>/dsh-invariants/totals.jsonl`. `dsh-invariants/vitest-global` sums them.
 */
export function totalsFile(): string {
  return process.env.DSH_INVARIANTS_TOTALS ?? join(tmpdir(), 'dsh-invariants', 'totals.jsonl')
}

/** One test file's line in the totals file. */
export interface FileTotals extends InvariantCounters {
  readonly file: string
  readonly registries: number
  /** Violations no test took: each failed the test it followed. */
  readonly unexpectedViolations: number
}

/**
 * Mounts `Invariants` on `app` (which must provide `llm` and `sessions`) and returns the registry.
 * Throws `INVALID_OPTIONS` for a config naming an unknown check.
 */
export async function mountInvariants(
  app: Context,
  config: InvariantsConfig = {},
): Promise<InvariantRegistry> {
  await app.plugin(InvariantRegistry, config)
  return app.invariants
}

/** Options of `createCheckedApp`. */
export interface CheckedAppOptions {
  readonly invariants?: InvariantsConfig
  readonly sessions?: SessionsConfig
}

/** A fresh cordis app with `LlmRuntime`, `Sessions` and `Invariants` mounted, in that order. */
export async function createCheckedApp(options: CheckedAppOptions = {}): Promise<Context> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, options.sessions ?? {})
  await mountInvariants(app, options.invariants ?? {})
  return app
}

let installed = false

/**
 * Installs, in the calling test file (or a vitest `setupFiles` module), an `afterEach` hook that fails
 * the test when any `InvariantRegistry` built in this file holds a violation — a test that breaks a
 * check on purpose takes its violations first (`registry.takeViolations()`) — and an `afterAll` hook
 * that appends the file's totals to `totalsFile()`. Idempotent within a file.
 */
export function installInvariantGuard(): void {
  if (installed) return
  installed = true
  const registries = new Set<InvariantRegistry>()
  const stopObserving = observeRegistries((registry) => {
    registries.add(registry)
  })
  let unexpected = 0
  let testFile = '(unknown test file)'
  afterEach((context) => {
    testFile = context.task.file.filepath
    const lines: string[] = []
    for (const registry of registries) {
      for (const violation of registry.takeViolations()) lines.push(formatViolation(violation))
    }
    if (lines.length === 0) return
    unexpected += lines.length
    throw new Error(
      `dsh-invariants: ${lines.length} violation(s) recorded during this test and not taken by it:\n${lines.join('\n')}`,
    )
  })
  afterAll(() => {
    stopObserving()
    const totals: FileTotals = {
      file: testFile,
      registries: registries.size,
      requestsChecked: 0,
      requestsOutsideSteps: 0,
      eventsChecked: 0,
      streamsChecked: 0,
      unexpectedViolations: unexpected,
    }
    const sum = { ...totals }
    for (const registry of registries) {
      const counters = registry.counters
      sum.requestsChecked += counters.requestsChecked
      sum.requestsOutsideSteps += counters.requestsOutsideSteps
      sum.eventsChecked += counters.eventsChecked
      sum.streamsChecked += counters.streamsChecked
    }
    const file = totalsFile()
    mkdirSync(dirname(file), { recursive: true })
    appendFileSync(file, `${JSON.stringify(sum)}\n`)
  })
}
