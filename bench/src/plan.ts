/** How big each scenario runs: the full suite (`pnpm bench`) and the CI-sized one (`--quick`). */
import type { LoopHarness } from './child.ts'
import type { PgPlan } from './scenarios/postgres.ts'

/** Sizes of one suite run. */
export interface Plan {
  readonly name: 'full' | 'quick' | 'peers'
  /** Fresh-process runs per measured thing; figures are medians over them. */
  readonly runs: number
  readonly loopSteps: number
  readonly loopHarnesses: readonly LoopHarness[]
  /** The 1,000-step loop's harnesses on the runtime beside this one (`--beside`): the peers and their baselines. */
  readonly besideHarnesses: readonly LoopHarness[]
  /** The long tool loop (growth over a long session, the chart's curves); zero steps skips it. */
  readonly longSteps: number
  readonly longRuns: number
  readonly longHarnesses: readonly LoopHarness[]
  /** Long-loop harnesses run in the first round only (minutes per run). */
  readonly longOnce: readonly LoopHarness[]
  readonly assemblyDeltas: number
  readonly storageEvents: number
  readonly storageBatches: readonly number[]
  readonly scaleAgents: number
  readonly scaleSteps: number
  readonly scaleRuns: number
  /** Session file sizes (events) the invariants CLI checks; empty skips the scenario. */
  readonly invariantsEvents: readonly number[]
  /** The PostgreSQL scenario (an embedded server, or `DSH_BENCH_PG_URL`); absent skips it. */
  readonly postgres?: PgPlan
}

/** The PostgreSQL scenario's sizes in the full suite (and in `--only postgres`). */
export const POSTGRES: PgPlan = { steps: 1000, loadEvents: 100_000, agents: 200, agentSteps: 10, runs: 3 }

const ALL_LOOPS: readonly LoopHarness[] = [
  'floor',
  'floor-jsonl',
  'pi-agent-core',
  'ai-sdk',
  'dsh-memory',
  'dsh-jsonl',
  'dsh-invariants',
]

/**
 * The full suite: the sizes; three interleaved runs of everything cheap, the 10,000-step
 * loop included (one of `ai`, whose 10,000-step turn takes minutes: its growth judges the growth
 * target, and with two runs one run slowed by the machine moved the median past the bound), two of
 * scale.
 */
export const FULL: Plan = {
  name: 'full',
  runs: 3,
  loopSteps: 1000,
  loopHarnesses: ALL_LOOPS,
  besideHarnesses: ['floor', 'pi-agent-core', 'ai-sdk', 'dsh-memory'],
  longSteps: 10_000,
  longRuns: 3,
  longHarnesses: ['floor', 'pi-agent-core', 'dsh-memory', 'dsh-invariants', 'ai-sdk'],
  longOnce: ['ai-sdk'],
  assemblyDeltas: 1_000_000,
  storageEvents: 100_000,
  storageBatches: [100, 1000],
  scaleAgents: 1000,
  scaleSteps: 10,
  scaleRuns: 2,
  invariantsEvents: [100_000, 1_000_000],
  postgres: POSTGRES,
}

/**
 * The CI suite: the same 1,000-step loop without the slow `ai` peer, three runs (the step-cost
 * bound judges their median; two runs gave 2.00× and 2.51× for the same code on one machine),
 * smaller everything else.
 */
export const QUICK: Plan = {
  name: 'quick',
  runs: 3,
  loopSteps: 1000,
  loopHarnesses: ALL_LOOPS.filter((h) => h !== 'ai-sdk'),
  besideHarnesses: ['floor', 'pi-agent-core', 'dsh-memory'],
  longSteps: 0,
  longRuns: 0,
  longHarnesses: [],
  longOnce: [],
  assemblyDeltas: 200_000,
  storageEvents: 10_000,
  storageBatches: [100],
  scaleAgents: 100,
  scaleSteps: 10,
  scaleRuns: 1,
  invariantsEvents: [100_000],
}

/**
 * The step-cost check alone (`--only loop`): the 1,000-step loop of dsh in memory and its
 * baselines, three interleaved runs, nothing else; what the quick-bench regression test runs.
 */
export const LOOP_ONLY: Plan = {
  ...QUICK,
  runs: 3,
  loopHarnesses: ['floor', 'pi-agent-core', 'dsh-memory'],
  besideHarnesses: ['floor', 'pi-agent-core', 'dsh-memory'],
  assemblyDeltas: 0,
  storageEvents: 0,
  storageBatches: [],
  scaleAgents: 0,
  scaleRuns: 0,
  invariantsEvents: [],
}

/**
 * The checked loop alone (`--only invariants`): the 1,000-step loop of dsh in memory with and without
 * every invariant check mounted, three interleaved runs, nothing else: the overhead and growth rows.
 */
export const INVARIANTS_ONLY: Plan = {
  ...LOOP_ONLY,
  loopHarnesses: ['dsh-memory', 'dsh-invariants'],
  besideHarnesses: [],
}

/**
 * The durable loop alone (`--only jsonl`): the raw floor with its two syncs per step and dsh over
 * `JsonlStorage`, next to both in memory (what each step costs without storage), three interleaved
 * runs of 1,000 steps, nothing else: the JSONL rows and their sync breakdown.
 */
export const JSONL_ONLY: Plan = {
  ...LOOP_ONLY,
  loopHarnesses: ['floor', 'floor-jsonl', 'dsh-memory', 'dsh-jsonl'],
}

/**
 * The peer comparison alone (`--only peers`, meant with `--beside`): the 1,000-step loop of dsh in
 * memory, pi-agent-core, `ai` and the floor, three interleaved runs, and scale with 1,000 agents,
 * on this runtime and the one beside it. What changes when the peers or the runtime change, in
 * about a minute on a quiet machine; → `results/peers.md`.
 */
export const PEERS_ONLY: Plan = {
  ...LOOP_ONLY,
  name: 'peers',
  loopHarnesses: ['floor', 'pi-agent-core', 'ai-sdk', 'dsh-memory'],
  besideHarnesses: ['floor', 'pi-agent-core', 'ai-sdk', 'dsh-memory'],
  scaleAgents: FULL.scaleAgents,
  scaleSteps: FULL.scaleSteps,
  scaleRuns: FULL.scaleRuns,
}
