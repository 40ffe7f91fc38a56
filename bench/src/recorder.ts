/** Per-step wall and CPU time, recorded at step boundaries by whichever harness is measured. */
import { curve, growth, mean, median, tenths } from './stats.ts'

/** Points of the per-step curve a run reports (each the mean of an equal slice of the steps). */
export const CURVE_POINTS = 100

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
  /** The whole run as `CURVE_POINTS` `[step, mean µs]` points. */
  readonly curve: readonly (readonly [number, number])[]
  /** Peak resident set size of the process, MB. */
  readonly peakRssMb: number
  /** Wall time of the whole turn, ms. */
  readonly totalMs: number
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

  constructor(expectedSteps: number) {
    this.wall = new Float64Array(expectedSteps)
    this.cpu = new Float64Array(expectedSteps)
  }

  /** Starts the clock; the first step is measured from here. */
  start(): void {
    this.startWall = performance.now()
    this.lastWall = this.startWall
    this.lastCpu = cpuMicros()
  }

  /** Marks the end of one step. Marks beyond the expected count are ignored. */
  mark(): void {
    const now = performance.now()
    const cpu = cpuMicros()
    if (this.count < this.wall.length) {
      this.wall[this.count] = (now - this.lastWall) * 1000
      this.cpu[this.count] = cpu - this.lastCpu
      this.count++
    }
    this.lastWall = now
    this.lastCpu = cpu
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
      curve: curve(wall, CURVE_POINTS),
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      totalMs: this.lastWall - this.startWall,
    }
  }
}

function cpuMicros(): number {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}
