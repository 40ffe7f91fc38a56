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
  it('counts the syncs of the marked steps and the wall time outside them', () => {
    const { probe, sync } = fakeProbe()
    const recorder = new StepRecorder(4, probe)
    sync(50, true) // before start: setup, not counted
    recorder.start()
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

  it('reports zeros without a probe', () => {
    const recorder = new StepRecorder(2)
    recorder.start()
    recorder.mark()
    recorder.mark()
    const summary = recorder.summary()
    expect([summary.syncsPerStep, summary.syncUs, summary.inlineSyncShare, summary.outsideSyncUs]).toEqual([
      0, 0, 0, 0,
    ])
  })
})
