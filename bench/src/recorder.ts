/** Per-step wall and CPU time, recorded at step boundaries by whichever harness is measured. */
import { setTimeout as sleep } from 'node:timers/promises'
import { curve, growth, mean, median, tenths } from './stats.ts'
import type { SyncProbe } from './sync-probe.ts'

/** Points of the per-step curve a run reports (each the mean of an equal slice of the steps). */
export const CURVE_POINTS = 100

/** The share of a run's steps that `earlyMeanUs` and `lateMeanUs` each average. */
export const PHASE_SHARE = 0.3

/**
 * How long a run idles between its harness's setup and its first measured step, ms
 * (`BENCH_SETTLE_MS` overrides it; 0 starts the clock at once). Loading a harness and building its
 * app leaves V8 work behind, a scavenge and the end of an incremental mark scheduled as tasks, that
 * runs at the first turn of the event loop: inside the first step of whichever harness yields there
 * first. An application that creates an agent and then waits for a message pays it while idle.
 */
export const SETTLE_MS = settleMs(process.env.BENCH_SETTLE_MS)

function settleMs(value: string | undefined): number {
  if (value === undefined || value === '') return 50
  const ms = Number(value)
  if (!Number.isInteger(ms) || ms < 0)
    throw new Error(`BENCH_SETTLE_MS: ${value} is not a whole number of ms`)
  return ms
}

/** What a tool-loop run reports about itself. */
export interface LoopSummary {
  /** Steps observed (step boundaries marked). */
  readonly steps: number
  /** Median wall time per step, µs. */
  readonly wallUs: number
  /** Mean wall time per step, µs: throughput, including the GC pauses the median hides. */
  readonly meanWallUs: number
  /** Median CPU time (user + system, all threads) per step, µs. */
  readonly cpuUs: number
  /** Median wall of the last tenth of steps over the middle tenth (see `growth` in stats.ts). */
  readonly growth: number
  /** Median wall of the last tenth over the first tenth (warm-up included; informational). */
  readonly firstGrowth: number
  /** Median wall per step of the first, middle and last tenth, µs. */
  readonly firstUs: number
  readonly midUs: number
  readonly lastUs: number
  /**
   * Mean wall per step of the first and of the last `PHASE_SHARE` of the steps, µs: where the mean
   * goes, V8's warm-up (not yet optimized code) against the warm step.
   */
  readonly earlyMeanUs: number
  readonly lateMeanUs: number
  /** The whole run as `CURVE_POINTS` `[step, mean µs]` points. */
  readonly curve: readonly (readonly [number, number])[]
  /** Peak resident set size of the process, MB. */
  readonly peakRssMb: number
  /** Wall time of the whole turn, ms. */
  readonly totalMs: number
  /**
   * With a sync probe (the JSONL harnesses; 0 without one): `fdatasync` calls per step, the median
   * wall µs of one, the share of them run inline, and the median over steps of each step's wall time
   * outside its syncs, µs (what the harness itself costs between barriers).
   */
  readonly syncsPerStep: number
  readonly syncUs: number
  readonly inlineSyncShare: number
  readonly outsideSyncUs: number
}

/**
 * Records one boundary per completed step. `start()` before the turn begins, `mark()` when each
 * step has finished (its tool result committed), `summary()` afterwards.
 */
export class StepRecorder {
  private readonly wall: Float64Array
  private readonly cpu: Float64Array
  private count = 0
  private lastWall = 0
  private lastCpu = 0
  private startWall = 0
  /** Per step, the wall time its syncs took, µs (with a probe). */
  private readonly synced: Float64Array
  private lastSyncMs = 0
  private syncsAtStart = { inline: 0, pooled: 0, finished: 0 }
  private syncsAtEnd = { inline: 0, pooled: 0, finished: 0 }

  constructor(
    expectedSteps: number,
    private readonly probe?: SyncProbe,
  ) {
    this.wall = new Float64Array(expectedSteps)
    this.cpu = new Float64Array(expectedSteps)
    this.synced = new Float64Array(probe === undefined ? 0 : expectedSteps)
  }

  private probeState(): { inline: number; pooled: number; finished: number } {
    const probe = this.probe
    if (probe === undefined) return { inline: 0, pooled: 0, finished: 0 }
    return { inline: probe.inline, pooled: probe.pooled, finished: probe.durationsMs.length }
  }

  /**
   * Idles `settleMs` (default `SETTLE_MS`), then starts the clock: the first step is measured from
   * when this resolves. Every harness calls it after its setup, right before it starts its turn.
   */
  async start(settleMs: number = SETTLE_MS): Promise<void> {
    if (settleMs > 0) await sleep(settleMs)
    this.startWall = performance.now()
    this.lastWall = this.startWall
    this.lastCpu = cpuMicros()
    this.lastSyncMs = this.probe?.totalMs ?? 0
    this.syncsAtStart = this.probeState()
  }

  /** Marks the end of one step. Marks beyond the expected count are ignored. */
  mark(): void {
    const now = performance.now()
    const cpu = cpuMicros()
    const syncMs = this.probe?.totalMs ?? 0
    if (this.count < this.wall.length) {
      this.wall[this.count] = (now - this.lastWall) * 1000
      this.cpu[this.count] = cpu - this.lastCpu
      if (this.probe !== undefined) {
        this.synced[this.count] = (syncMs - this.lastSyncMs) * 1000
        this.syncsAtEnd = this.probeState()
      }
      this.count++
    }
    this.lastWall = now
    this.lastCpu = cpu
    this.lastSyncMs = syncMs
  }

  /** Number of steps marked so far. */
  get steps(): number {
    return this.count
  }

  /** The summary of the steps marked so far. */
  summary(): LoopSummary {
    const wall = this.wall.subarray(0, this.count)
    const { window, midStart } = tenths(this.count)
    const firstUs = median(wall.subarray(0, window))
    const lastUs = median(wall.subarray(this.count - window))
    const phase = Math.max(1, Math.floor(this.count * PHASE_SHARE))
    return {
      steps: this.count,
      wallUs: median(wall),
      meanWallUs: mean(wall),
      cpuUs: median(this.cpu.subarray(0, this.count)),
      growth: growth(wall),
      firstGrowth: lastUs / firstUs,
      firstUs,
      midUs: median(wall.subarray(midStart, midStart + window)),
      lastUs,
      earlyMeanUs: mean(wall.subarray(0, phase)),
      lateMeanUs: mean(wall.subarray(this.count - phase)),
      curve: curve(wall, CURVE_POINTS),
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      totalMs: this.lastWall - this.startWall,
      ...this.syncFigures(wall),
    }
  }

  /** The sync breakdown of the steps marked so far (zeros without a probe or syncs). */
  private syncFigures(
    wall: Float64Array,
  ): Pick<LoopSummary, 'syncsPerStep' | 'syncUs' | 'inlineSyncShare' | 'outsideSyncUs'> {
    const probe = this.probe
    const start = this.syncsAtStart
    const end = this.syncsAtEnd
    const calls = end.inline - start.inline + (end.pooled - start.pooled)
    if (probe === undefined || this.count === 0 || calls === 0) {
      return { syncsPerStep: 0, syncUs: 0, inlineSyncShare: 0, outsideSyncUs: 0 }
    }
    const outside = new Float64Array(this.count)
    for (let i = 0; i < this.count; i++) outside[i] = (wall[i] ?? 0) - (this.synced[i] ?? 0)
    const durations = probe.durationsMs.slice(start.finished, end.finished).map((ms) => ms * 1000)
    return {
      syncsPerStep: calls / this.count,
      syncUs: median(durations),
      inlineSyncShare: (end.inline - start.inline) / calls,
      outsideSyncUs: median(outside),
    }
  }
}

function cpuMicros(): number {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}
