/**
 * The JSONL rows' sync breakdown: a step recorder with a sync probe counts only the syncs between
 * `start()` and the last `mark()`, and subtracts each step's sync time from that step's wall time.
 */
import { describe, expect, it } from 'vitest'
import { StepRecorder } from '../src/recorder.ts'
import type { SyncProbe } from '../src/sync-probe.ts'

/** A probe fed by hand: `sync(ms, inline)` records one finished sync of `ms`. */
function fakeProbe() {
  const probe = { inline: 0, pooled: 0, durationsMs: [] as number[], totalMs: 0 }
  const sync = (ms: number, inline: boolean) => {
    if (inline) probe.inline++
    else probe.pooled++
    probe.durationsMs.push(ms)
    probe.totalMs += ms
  }
  return { probe: probe as SyncProbe, sync }
}

/** Busy-waits `ms` of wall time (the recorder reads `performance.now()`). */
function spend(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // wait
  }
}

describe('StepRecorder sync breakdown', () => {
  it('counts the syncs of the marked steps and the wall time outside them', async () => {
    const { probe, sync } = fakeProbe()
    const recorder = new StepRecorder(4, probe)
    sync(50, true) // before start: setup, not counted
    await recorder.start(0)
    for (let step = 0; step < 4; step++) {
      spend(3)
      // Each step reports two syncs of 1 ms (the second of the last step pooled), though no time
      // passes in them: the step's wall outside its syncs is then its wall minus 2 ms.
      sync(1, true)
      sync(1, step !== 3)
      recorder.mark()
    }
    sync(40, true) // after the last step: not counted
    const summary = recorder.summary()
    expect(summary.syncsPerStep).toBe(2)
    expect(summary.syncUs).toBe(1000)
    expect(summary.inlineSyncShare).toBe(7 / 8)
    expect(summary.outsideSyncUs).toBeCloseTo(summary.wallUs - 2000, 0)
    expect(summary.wallUs).toBeGreaterThanOrEqual(3000)
  })

  it('reports zeros without a probe', async () => {
    const recorder = new StepRecorder(2)
    await recorder.start(0)
    recorder.mark()
    recorder.mark()
    const summary = recorder.summary()
    expect([summary.syncsPerStep, summary.syncUs, summary.inlineSyncShare, summary.outsideSyncUs]).toEqual([
      0, 0, 0, 0,
    ])
  })

  it('idles before it starts the clock, so work that setup left scheduled runs outside the first step', async () => {
    // What setup leaves behind (V8's GC tasks in a real run), here a timer that holds the loop 20 ms.
    let ran = false
    setTimeout(() => {
      ran = true
      spend(20)
    }, 5)
    const recorder = new StepRecorder(1)
    await recorder.start(40)
    expect(ran).toBe(true)
    spend(2)
    recorder.mark()
    const { wallUs } = recorder.summary()
    expect(wallUs).toBeGreaterThanOrEqual(2000)
    expect(wallUs).toBeLessThan(15_000)
  })

  it('starts the clock at once with no idle time', async () => {
    let ran = false
    const timer = setTimeout(() => {
      ran = true
    }, 5)
    const recorder = new StepRecorder(1)
    await recorder.start(0)
    expect(ran).toBe(false)
    clearTimeout(timer)
  })
})
