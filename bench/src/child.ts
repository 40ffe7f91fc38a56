/** The jobs a child process can run, one measured thing per fresh process. */
import { join } from 'node:path'
import type { DshLoopMode } from './loop/dsh.ts'
import { aiSdkDriver, piAgentDriver } from './peers.ts'
import { type LoopSummary, StepRecorder } from './recorder.ts'
import type { AssemblyResult } from './scenarios/assembly.ts'
import type { BackpressureResult } from './scenarios/backpressure.ts'
import type { BarrierResult } from './scenarios/barriers.ts'
import type { GenerateResult } from './scenarios/invariants-cli.ts'
import type { ListResult } from './scenarios/list.ts'
import type { PgFleetResult, PgLoadResult, PgStepResult } from './scenarios/postgres.ts'
import type { ScaleResult } from './scenarios/scale.ts'
import type { AppendResult, LoadResult } from './scenarios/storage.ts'

/** Closed: the harnesses of the tool-loop scenario. */
export type LoopHarness =
  | 'floor'
  | 'floor-jsonl'
  | 'pi-agent-core'
  | 'ai-sdk'
  | 'dsh-memory'
  | 'dsh-jsonl'
  | 'dsh-invariants'

/** One tool-loop turn of `steps` steps; `dir` holds files of the JSONL variants. */
export interface LoopJob {
  readonly kind: 'loop'
  readonly harness: LoopHarness
  readonly steps: number
  readonly dir: string
  /** Durability barriers per step of the raw baseline (`floor-jsonl`). */
  readonly barriersPerStep?: 1 | 2
}

/** `deltas` one-character-ish deltas round-robin over `blocks` blocks. */
export interface AssemblyJob {
  readonly kind: 'assembly'
  readonly impl: 'dsh' | 'join'
  readonly deltas: number
  readonly blocks: number
}

/** Append `events` events to `file`, durable every `batch` events. */
export interface AppendJob {
  readonly kind: 'storage-append'
  readonly impl: 'dsh' | 'raw'
  readonly events: number
  readonly batch: number
  readonly dir: string
}

/** Cold-load a JSONL session file written by an `AppendJob`. */
export interface LoadJob {
  readonly kind: 'storage-load'
  readonly impl: 'dsh' | 'raw'
  readonly dir: string
}

/** `agents` agents each running a `steps`-step turn concurrently. */
export interface ScaleJob {
  readonly kind: 'scale'
  readonly impl: 'dsh' | 'pi-agent-core'
  readonly agents: number
  readonly steps: number
}

/** Append `totalMiB` of events behind a sync stalled `stallMs` (scenario 4b, backpressure). */
export interface BackpressureJob {
  readonly kind: 'backpressure'
  readonly totalMiB: number
  readonly highWaterMiB: number
  readonly stallMs: number
  /** How the producer makes each event's random text (see `measureBackpressure`). */
  readonly producer: 'refill' | 'fresh-buffer'
}

/** `rounds` interleaved rounds of `barriers` JSONL barriers per variant (scenario 4c). */
export interface BarriersJob {
  readonly kind: 'barriers'
  readonly barriers: number
  readonly rounds: number
  /** False: skip the syncs, measuring only the CPU side of a barrier. */
  readonly disk: boolean
}

/** Write a clean session file of at least `events` events for the invariants CLI scenario. */
export interface GenerateJob {
  readonly kind: 'invariants-generate'
  readonly file: string
  readonly events: number
}

/** Write `count` short JSONL session files into `dir` (scenario 9). */
export interface ListGenerateJob {
  readonly kind: 'list-generate'
  readonly dir: string
  readonly count: number
}

/** Time `ctx.sessions.list()` over the JSONL session files in `dir` (scenario 9). */
export interface ListJob {
  readonly kind: 'list'
  readonly impl: 'dsh' | 'raw'
  readonly dir: string
}

/** `steps` tool-loop steps appended to PostgreSQL at `url`, two batches a step. */
export interface PgStepJob {
  readonly kind: 'pg-steps'
  readonly impl: 'dsh' | 'raw'
  readonly url: string
  readonly steps: number
}

/** Cold-load session `id` from PostgreSQL at `url`. */
export interface PgLoadJob {
  readonly kind: 'pg-load'
  readonly impl: 'dsh' | 'raw'
  readonly url: string
  readonly id: string
}

/** One fleet host process: `agents` agents × `steps` steps on PostgreSQL at `url`. */
export interface PgFleetJob {
  readonly kind: 'pg-fleet'
  readonly url: string
  readonly agents: number
  readonly steps: number
  readonly tag: string
}

/** Closed: every job. */
export type Job =
  | LoopJob
  | AssemblyJob
  | AppendJob
  | LoadJob
  | ScaleJob
  | BackpressureJob
  | BarriersJob
  | PgStepJob
  | PgLoadJob
  | PgFleetJob
  | GenerateJob
  | ListGenerateJob
  | ListJob

/** What a job reports. */
export type JobResult<J extends Job> = J extends LoopJob
  ? LoopSummary
  : J extends AssemblyJob
    ? AssemblyResult
    : J extends AppendJob
      ? AppendResult
      : J extends LoadJob
        ? LoadResult
        : J extends ScaleJob
          ? ScaleResult
          : J extends BackpressureJob
            ? BackpressureResult
            : J extends BarriersJob
              ? BarrierResult
              : J extends PgStepJob
                ? PgStepResult
                : J extends PgLoadJob
                  ? PgLoadResult
                  : J extends PgFleetJob
                    ? PgFleetResult
                    : J extends GenerateJob
                      ? GenerateResult
                      : J extends ListGenerateJob
                        ? { readonly files: number }
                        : J extends ListJob
                          ? ListResult
                          : never

/**
 * Runs `job` in this process and returns its result. Modules are imported per job, so a child
 * loads only the harness it measures (peak RSS is that harness's own).
 */
export async function runJob(job: Job): Promise<unknown> {
  switch (job.kind) {
    case 'loop':
      return runLoop(job)
    case 'assembly':
      return (await import('./scenarios/assembly.ts')).measureAssembly(job.impl, job.deltas, job.blocks)
    case 'storage-append':
      return (await import('./scenarios/storage.ts')).measureAppend(job.impl, job.events, job.batch, job.dir)
    case 'storage-load':
      return (await import('./scenarios/storage.ts')).measureLoad(job.impl, job.dir)
    case 'scale':
      return (await import('./scenarios/scale.ts')).measureScale(job.impl, job.agents, job.steps)
    case 'barriers':
      return (await import('./scenarios/barriers.ts')).measureBarriers(job.barriers, job.rounds, job.disk)
    case 'backpressure':
      return (await import('./scenarios/backpressure.ts')).measureBackpressure(
        job.totalMiB,
        job.highWaterMiB,
        job.stallMs,
        job.producer,
      )
    case 'invariants-generate':
      return (await import('./scenarios/invariants-cli.ts')).generateSessionFile(job.file, job.events)
    case 'list-generate':
      return (await import('./scenarios/list.ts')).writeSessionFiles(job.dir, job.count)
    case 'list':
      return job.impl === 'dsh'
        ? (await import('./scenarios/list.ts')).measureList(job.dir)
        : (await import('./scenarios/list.ts')).measureListFloor(job.dir)
    case 'pg-steps':
      return (await import('./scenarios/postgres.ts')).measurePgSteps(job.impl, job.url, job.steps)
    case 'pg-load':
      return (await import('./scenarios/postgres.ts')).measurePgLoad(job.impl, job.url, job.id)
    case 'pg-fleet':
      return (await import('./scenarios/postgres.ts')).measurePgFleet(job.url, job.agents, job.steps, job.tag)
    default:
      return unreachable(job)
  }
}

async function runLoop(job: LoopJob): Promise<LoopSummary> {
  // The durable harnesses time their syncs (both of them, so both pay the probe's clock reads).
  const durable = job.harness === 'floor-jsonl' || job.harness === 'dsh-jsonl'
  const probe = durable ? (await import('./sync-probe.ts')).installSyncProbe() : undefined
  const recorder = new StepRecorder(job.steps, probe)
  switch (job.harness) {
    case 'floor':
      await (await import('./loop/floor.ts')).runFloor(job.steps, recorder, { kind: 'memory' })
      break
    case 'floor-jsonl':
      await (await import('./loop/floor.ts')).runFloor(job.steps, recorder, {
        kind: 'jsonl',
        file: join(job.dir, 'floor.jsonl'),
        // `BENCH_JSONL_SYNC=none` skips the floor's syncs too (see `loop/dsh.ts`).
        sync: process.env.BENCH_JSONL_SYNC === 'none' ? 'none' : 'fdatasync',
        barriersPerStep: job.barriersPerStep ?? 2,
      })
      break
    case 'pi-agent-core':
      await (await piAgentDriver()).runPiAgent(job.steps, recorder)
      break
    case 'ai-sdk':
      await (await aiSdkDriver()).runAiSdk(job.steps, recorder)
      break
    case 'dsh-memory':
    case 'dsh-jsonl':
    case 'dsh-invariants':
      await (await import('./loop/dsh.ts')).runDshLoop(job.steps, recorder, dshMode(job.harness), job.dir)
      break
    default:
      return unreachable(job.harness)
  }
  if (recorder.steps !== job.steps) {
    throw new Error(`${job.harness}: ${recorder.steps} steps completed, ${job.steps} expected`)
  }
  return recorder.summary()
}

function dshMode(harness: 'dsh-memory' | 'dsh-jsonl' | 'dsh-invariants'): DshLoopMode {
  return harness === 'dsh-memory' ? 'memory' : harness === 'dsh-jsonl' ? 'jsonl' : 'invariants'
}

function unreachable(value: never): never {
  throw new Error(`bench: unknown job ${JSON.stringify(value)}`)
}
