/** Per-step wall and CPU time, recorded at step boundaries by whichever harness is measured. */
import { growth, mean, median } from './stats.ts'

/** What a tool-loop run reports about itself. */
export interface LoopSummary {
  /** Steps observed (step boundaries marked). */
  readonly steps: number
  /** Median wall time per step, µs. */
  readonly wallUs: number
  /** Mean wall time per step, µs (includes GC pauses the median hides). */
  readonly meanWallUs: number
  /** Median CPU time (user + system, all threads) per step, µs. */
  readonly cpuUs: number
  /** Median wall of the last tenth of steps over the first tenth. */
  readonly growth: number
  /** Median wall per step of the first, middle (steps 451–550 of 1,000) and last tenth, µs. */
  readonly firstUs: number
  readonly midUs: number
  readonly lastUs: number
  /**
   * Median of the last tenth over the middle tenth: growth with JIT warm-up out of the picture
   * (the first tenth is slow while code is compiled, which can hide a cost that grows with n).
   */
  readonly lateGrowth: number
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
    const window = Math.max(1, Math.floor(this.count / 10))
    const midStart = Math.floor((this.count - window) / 2)
    const midUs = median(wall.subarray(midStart, midStart + window))
    const lastUs = median(wall.subarray(this.count - window))
    return {
      steps: this.count,
      wallUs: median(wall),
      meanWallUs: mean(wall),
      cpuUs: median(this.cpu.subarray(0, this.count)),
      growth: growth(wall),
      firstUs: median(wall.subarray(0, window)),
      midUs,
      lastUs,
      lateGrowth: lastUs / midUs,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      totalMs: this.lastWall - this.startWall,
    }
  }
}

function cpuMicros(): number {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}
