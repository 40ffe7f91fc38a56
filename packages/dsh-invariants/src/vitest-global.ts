/**
 * `dsh-invariants/vitest-global`: a vitest `globalSetup` module. `setup` points this run's test files at
 * a totals file of their own; `teardown` sums every test file's line and prints one summary line (also
 * written next to the totals file as `summary.txt`), so a CI log states how many requests were
 * re-derived.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { FileTotals } from './vitest.ts'
import { totalsFile } from './vitest.ts'

const SETUP = Symbol.for('dsh-invariants/global-setup')
const TEARDOWN = Symbol.for('dsh-invariants/global-teardown')
/** Set when `setup` chose the totals file itself: `teardown` then removes it. */
const PICKED = Symbol.for('dsh-invariants/global-picked')

/**
 * Once per process, however many projects list this module: unless `DSH_INVARIANTS_TOTALS` is set
 * already, sets it to a file unique to this run (so concurrent runs on one machine do not mix), which
 * the test workers inherit; then empties that file.
 */
export function setup(): void {
  const holder = globalThis as { [SETUP]?: boolean; [PICKED]?: boolean }
  if (holder[SETUP] === true) return
  holder[SETUP] = true
  if (process.env.DSH_INVARIANTS_TOTALS === undefined) holder[PICKED] = true
  process.env.DSH_INVARIANTS_TOTALS ??= join(
    tmpdir(),
    'dsh-invariants',
    `totals-${process.pid}-${Date.now()}.jsonl`,
  )
  rmSync(totalsFile(), { force: true })
}

/** Sums the totals file into one line, or `undefined` when no test file wrote to it. */
export function summarizeTotals(file = totalsFile()): string | undefined {
  if (!existsSync(file)) return undefined
  const sum = { files: 0, registries: 0, requests: 0, outside: 0, events: 0, streams: 0, unexpected: 0 }
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue
    const totals = JSON.parse(line) as FileTotals
    sum.files++
    sum.registries += totals.registries
    sum.requests += totals.requestsChecked
    sum.outside += totals.requestsOutsideSteps ?? 0
    sum.events += totals.eventsChecked
    sum.streams += totals.streamsChecked
    sum.unexpected += totals.unexpectedViolations
  }
  return `dsh-invariants: ${sum.requests} requests re-derived, ${sum.outside} more sent outside loop steps (not re-derived), ${sum.events} events and ${sum.streams} streams checked by ${sum.registries} registries across ${sum.files} test files; ${sum.unexpected} unexpected violations`
}

/**
 * Prints and stores the summary line (once per process) in `summary.txt` beside the totals file, and
 * removes the totals file when `setup` picked it.
 */
export function teardown(): void {
  const holder = globalThis as { [TEARDOWN]?: boolean; [PICKED]?: boolean }
  if (holder[TEARDOWN] === true) return
  holder[TEARDOWN] = true
  const file = totalsFile()
  const line = summarizeTotals()
  // A totals file `setup` picked for this run is not left behind; one the user named is kept.
  if (holder[PICKED] === true) rmSync(file, { force: true })
  if (line === undefined) return
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(join(dirname(file), 'summary.txt'), `${line}\n`)
  process.stdout.write(`${line}\n`)
}
