/**
 * Instruction counts (`--only instructions`): the tool loop's work per step on the main thread,
 * counted by callgrind instead of timed. Each harness runs the 1,000-step turn and a 2-step turn
 * under `valgrind --tool=callgrind --separate-threads=yes --cache-sim=yes`; the main thread's counts
 * of the long turn minus the short one's, over the steps between, are the per-step figures. The
 * compiler and GC helper threads are left out (they run beside the main thread, on another core
 * when there is one).
 *
 * What it is for: four runs of one build gave dsh's per-step count within 2% of each other on a
 * loaded machine, where the wall-clock rows move by 20–50% between runs. So a change of a few
 * percent in the work of a step shows here in a run or two, where the timed rows need many
 * interleaved rounds. It counts work, not time: cache misses are simulated (their cost is not), waiting is not
 * counted, and the JIT tiers up at the same step numbers as outside valgrind (V8 counts executed
 * bytecode, not time), though optimized code may be installed at other points.
 */
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { LoopHarness, LoopJob } from '../child.ts'
import { type Row, row } from '../report.ts'
import { MAIN } from '../spawn.ts'
import { tenths } from '../stats.ts'

/** The short turn whose counts are subtracted: start-up, module loading, the first steps, exit. */
export const SHORT_STEPS = 2

/**
 * How much slower `performance.now()` runs in a counted child (`BENCH_CLOCK_SCALE`). Under
 * callgrind a program runs 50–150× slower, so dsh's 1 ms time slice would end after a few chunks
 * and the count would be full of yields that a native run makes once every few steps (and their
 * number would follow the machine's load). Slowed by this factor, a slice holds about as much work
 * as natively.
 */
export const CLOCK_SCALE = 100

/**
 * Child side: makes `performance.now()` (the step recorder's clock) and `Date.now()` (the time
 * slice's and the event times') advance `factor` times slower from now on; `Date.now` stays whole
 * milliseconds. Timers are left alone. Returns the undo.
 */
export function slowClock(factor: number): () => void {
  if (!(factor >= 1)) throw new Error(`BENCH_CLOCK_SCALE must be at least 1, got ${factor}`)
  const real = performance.now.bind(performance)
  const origin = real()
  performance.now = () => origin + (real() - origin) / factor
  const realDate = Date.now
  const dateOrigin = realDate()
  Date.now = () => dateOrigin + Math.floor((realDate() - dateOrigin) / factor)
  return () => {
    // The patch is an own property over the prototype's method: removing it restores the clock.
    delete (performance as { now?: unknown }).now
    Date.now = realDate
  }
}

/** Event counts of one callgrind profile part, by event name (`Ir`, `I1mr`, `D1mr`, ...). */
export type EventCounts = Readonly<Record<string, number>>

/**
 * The totals of a callgrind output file: its `events:` line names the columns of its `summary:`
 * (or older `totals:`) line. Throws naming what is missing.
 */
export function parseCallgrindTotals(text: string): EventCounts {
  const events = /^events:\s*(.+)$/m.exec(text)?.[1]?.trim().split(/\s+/)
  const totals = (/^summary:\s*(.+)$/m.exec(text) ?? /^totals:\s*(.+)$/m.exec(text))?.[1]?.trim().split(/\s+/)
  if (events === undefined) throw new Error('callgrind output has no "events:" line')
  if (totals === undefined) throw new Error('callgrind output has no "summary:" or "totals:" line')
  const counts: Record<string, number> = {}
  events.forEach((name, i) => {
    const value = Number(totals[i] ?? 0)
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new Error(`callgrind output: event ${name} has count ${JSON.stringify(totals[i])}`)
    }
    counts[name] = value
  })
  return counts
}

/** `(long - short) / steps` for every event both have. */
export function perStep(long: EventCounts, short: EventCounts, steps: number): EventCounts {
  if (!(steps > 0)) throw new Error(`perStep: steps must be positive, got ${steps}`)
  const out: Record<string, number> = {}
  for (const [name, value] of Object.entries(long)) {
    const base = short[name]
    if (base !== undefined) out[name] = (value - base) / steps
  }
  return out
}

/** Runs `command args` to its end; resolves with its exit code and stderr, rejects if it cannot start. */
function run(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
  })
}

/** Rejects with what to install when valgrind is not on the PATH. */
export async function requireValgrind(): Promise<void> {
  const found = await run('valgrind', ['--version']).catch(() => undefined)
  if (found?.code !== 0) {
    throw new Error('bench --only instructions needs valgrind on the PATH (Debian: apt-get install valgrind)')
  }
}

/** The main thread's counts of one loop job under callgrind; `out` is the profile's path prefix. */
async function countLoop(job: LoopJob, out: string): Promise<EventCounts> {
  const args = [
    '--tool=callgrind',
    '--separate-threads=yes',
    '--cache-sim=yes',
    // V8 writes and rewrites machine code: valgrind must notice every change to it.
    '--smc-check=all',
    `--callgrind-out-file=${out}`,
    process.execPath,
    MAIN,
    '--child',
    JSON.stringify(job),
  ]
  const { code, stderr } = await run('valgrind', args, {
    ...process.env,
    BENCH_CLOCK_SCALE: String(CLOCK_SCALE),
  })
  if (code !== 0) {
    // valgrind's own lines start with `==pid==`; what is left is the child's.
    const own = stderr.split('\n').filter((line) => line.trim() !== '' && !/^==\d+==/.test(line))
    const detail = own.slice(-6).join('\n')
    throw new Error(`callgrind run of ${job.harness} (${job.steps} steps) exited with ${code}: ${detail}`)
  }
  // With --separate-threads, each thread has its own file; `-01` is thread 1, the main thread.
  const text = await readFile(`${out}-01`, 'utf8')
  if (!/^thread:\s*1\s*$/m.test(text)) throw new Error(`${out}-01 is not the main thread's profile`)
  return parseCallgrindTotals(text)
}

/** Runs `tasks` at most `width` at a time (valgrind runs its guest on one core). */
async function pooled<T>(tasks: readonly (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++
      results[index] = await (tasks[index] as () => Promise<T>)()
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker))
  return results
}

/** Per-step main-thread counts of each harness: the `steps`-step turn minus the `SHORT_STEPS` one. */
export async function measureInstructions(
  harnesses: readonly LoopHarness[],
  steps: number,
  dir: string,
  log: (message: string) => void,
): Promise<Map<LoopHarness, EventCounts>> {
  const counts = await countTurns(harnesses, [steps, SHORT_STEPS], dir, log)
  const out = new Map<LoopHarness, EventCounts>()
  harnesses.forEach((harness, i) => {
    const [long, short] = counts[i] as EventCounts[]
    out.set(harness, perStep(long as EventCounts, short as EventCounts, steps - SHORT_STEPS))
  })
  return out
}

/**
 * The main-thread totals of each harness's turns of each length in `lengths` (`[harness][length]`),
 * counted two callgrind runs at a time.
 */
async function countTurns(
  harnesses: readonly LoopHarness[],
  lengths: readonly number[],
  dir: string,
  log: (message: string) => void,
): Promise<EventCounts[][]> {
  await requireValgrind()
  const tasks = harnesses.flatMap((harness) =>
    lengths.map((n) => async () => {
      const where = join(dir, `${harness}-${n}`)
      log(`callgrind: ${harness}, ${n} steps`)
      return countLoop({ kind: 'loop', harness, steps: n, dir: where }, `${where}.callgrind`)
    }),
  )
  const counts = await pooled(tasks, 2)
  return harnesses.map((_, i) => counts.slice(i * lengths.length, (i + 1) * lengths.length))
}

/**
 * The turn lengths a counted growth figure needs for a `steps`-step turn: the ends of its middle
 * tenth and of its last tenth (4,500, 5,500, 9,000 and 10,000 for 10,000 steps), the tenths the
 * timed growth row compares (`tenths` in stats.ts).
 */
export function growthPoints(steps: number): readonly [number, number, number, number] {
  const { window, midStart } = tenths(steps)
  if (!(midStart > 0 && window > 0 && midStart + window <= steps - window)) {
    throw new Error(`growthPoints: a ${steps}-step turn has no separate middle and last tenth`)
  }
  return [midStart, midStart + window, steps - window, steps]
}

/** Per-step counts over a session's middle and last tenth, and their ratio per event. */
export interface CountedGrowth {
  readonly middle: EventCounts
  readonly last: EventCounts
  /** `last / middle` per event: what the timed growth row measures, counted. */
  readonly growth: EventCounts
}

/**
 * Counted growth from the four turns of `growthPoints` (their main-thread totals, in that order):
 * the middle tenth's per-step counts are the 5,500-step turn minus the 4,500-step one, the last
 * tenth's the 10,000-step turn minus the 9,000-step one.
 */
export function countedGrowth(
  points: readonly [number, number, number, number],
  totals: readonly [EventCounts, EventCounts, EventCounts, EventCounts],
): CountedGrowth {
  const [a, b, c, d] = points
  const middle = perStep(totals[1], totals[0], b - a)
  const last = perStep(totals[3], totals[2], d - c)
  const growth: Record<string, number> = {}
  for (const [name, value] of Object.entries(last)) {
    const base = middle[name]
    if (base !== undefined && base > 0) growth[name] = value / base
  }
  return { middle, last, growth }
}

/** Counted growth of each harness over a `steps`-step turn (four callgrind runs each, two at a time). */
export async function measureCountedGrowth(
  harnesses: readonly LoopHarness[],
  steps: number,
  dir: string,
  log: (message: string) => void,
): Promise<Map<LoopHarness, CountedGrowth>> {
  const points = growthPoints(steps)
  const counts = await countTurns(harnesses, points, dir, log)
  const out = new Map<LoopHarness, CountedGrowth>()
  harnesses.forEach((harness, i) => {
    const totals = counts[i] as [EventCounts, EventCounts, EventCounts, EventCounts]
    out.set(harness, countedGrowth(points, totals))
  })
  return out
}

const METRICS = [
  ['Ir', 'instructions'],
  ['I1mr', 'L1 instruction-cache misses'],
  ['D1mr', 'L1 data-cache read misses'],
] as const

/** The rows: each dsh harness against pi-agent-core and the floor, per event (informational). */
export async function instructionsScenario(
  steps: number,
  dir: string,
  log: (message: string) => void,
): Promise<Row[]> {
  const counts = await measureInstructions(['dsh-memory', 'pi-agent-core', 'floor'], steps, dir, log)
  const dsh = counts.get('dsh-memory') as EventCounts
  const rows: Row[] = []
  for (const baselineName of ['pi-agent-core', 'floor'] as const) {
    const baseline = counts.get(baselineName) as EventCounts
    for (const [event, words] of METRICS) {
      rows.push(
        row({
          id: `instructions-${event}-${baselineName}`,
          scenario: `1 tool loop, counted (callgrind, main thread, steps ${SHORT_STEPS + 1}–${steps})`,
          metric: `in-memory, ${words} per step`,
          dsh: dsh[event] ?? Number.NaN,
          baselineName,
          baseline: baseline[event] ?? Number.NaN,
        }),
      )
    }
  }
  return rows
}

/**
 * The counted growth rows (`--only instructions --long`): dsh in memory against the floor, per event,
 * the middle tenth's and the last tenth's per-step counts and their ratio (informational: the timed
 * growth row of the full suite is the one judged).
 */
export async function countedGrowthScenario(
  steps: number,
  dir: string,
  log: (message: string) => void,
): Promise<Row[]> {
  const [a, b, c, d] = growthPoints(steps)
  const counts = await measureCountedGrowth(['dsh-memory', 'floor'], steps, dir, log)
  const dsh = counts.get('dsh-memory') as CountedGrowth
  const floor = counts.get('floor') as CountedGrowth
  const scenario = `1 tool loop, ${steps.toLocaleString('en-US')} steps, counted (callgrind, main thread)`
  const rows: Row[] = []
  for (const [event, words] of METRICS) {
    const part = (id: string, metric: string, pick: (g: CountedGrowth) => EventCounts) =>
      row({
        id: `instructions-growth-${id}-${event}`,
        scenario,
        metric: `in-memory, ${words} ${metric}`,
        dsh: pick(dsh)[event] ?? Number.NaN,
        baselineName: 'floor',
        baseline: pick(floor)[event] ?? Number.NaN,
      })
    rows.push(
      part('middle', `per step, steps ${a + 1}–${b}`, (g) => g.middle),
      part('last', `per step, steps ${c + 1}–${d}`, (g) => g.last),
      part('ratio', 'growth (last tenth / middle tenth)', (g) => g.growth),
    )
  }
  return rows
}
