/**
 * Event-loop delay, sample by sample: a 1 ms timer chain records how late each tick ran (the time
 * the loop was held past the tick's due time). Like `perf_hooks.monitorEventLoopDelay` at 1 ms
 * resolution, but the samples themselves come back, so the runs of one scenario can be pooled into
 * one histogram: a fast run has fewer 1 ms ticks than a p99 needs, several runs together do not.
 */

/** Records event-loop delay samples (ms) from `start()` to `stop()`. */
export class DelaySampler {
  private readonly samples: number[] = []
  private timer: NodeJS.Timeout | undefined
  private due = 0

  /** Starts the 1 ms chain. */
  start(): void {
    this.due = performance.now() + 1
    this.timer = setTimeout(this.tick, 1)
  }

  /** Stops the chain and returns every sample, in ms, in the order taken. */
  stop(): number[] {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    return this.samples
  }

  private readonly tick = (): void => {
    const now = performance.now()
    this.samples.push(Math.max(0, now - this.due))
    this.due = now + 1
    this.timer = setTimeout(this.tick, 1)
  }
}
