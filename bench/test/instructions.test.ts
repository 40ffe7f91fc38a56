/** The instruction-count scenario's arithmetic: callgrind totals read by name, per-step differences. */
import { describe, expect, it } from 'vitest'
import {
  countedGrowth,
  growthPoints,
  parseCallgrindTotals,
  perStep,
  slowClock,
} from '../src/scenarios/instructions.ts'

const PROFILE = `# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  node main.js --child {}
part: 1
thread: 1

events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 2177436011 616169526 322501025 46941483 22580505 4254649 75040 104175 413433

fn=(1) main
0 5
totals: 2177436009 616169526 322501025 46941482 22580505 4254649 75040 104175 413433
`

describe('parseCallgrindTotals', () => {
  it('names each count of the summary line after its event column', () => {
    expect(parseCallgrindTotals(PROFILE)).toEqual({
      Ir: 2177436011,
      Dr: 616169526,
      Dw: 322501025,
      I1mr: 46941483,
      D1mr: 22580505,
      D1mw: 4254649,
      ILmr: 75040,
      DLmr: 104175,
      DLmw: 413433,
    })
  })

  it('falls back to the totals line of a profile without a summary', () => {
    expect(parseCallgrindTotals('events: Ir\ntotals: 42\n')).toEqual({ Ir: 42 })
  })

  it('refuses a profile without its events or totals, and a count that is not one', () => {
    expect(() => parseCallgrindTotals('summary: 1\n')).toThrow('callgrind output has no "events:" line')
    expect(() => parseCallgrindTotals('events: Ir\n')).toThrow(
      'callgrind output has no "summary:" or "totals:" line',
    )
    expect(() => parseCallgrindTotals('events: Ir I1mr\nsummary: 12 x\n')).toThrow(
      'callgrind output: event I1mr has count "x"',
    )
  })
})

describe('perStep', () => {
  it('divides the long turn minus the short one by the steps between', () => {
    expect(perStep({ Ir: 2_100, I1mr: 40 }, { Ir: 100, I1mr: 20, D1mr: 3 }, 1_000)).toEqual({
      Ir: 2,
      I1mr: 0.02,
    })
  })

  it('refuses a step count that is not positive', () => {
    expect(() => perStep({ Ir: 1 }, { Ir: 0 }, 0)).toThrow('perStep: steps must be positive, got 0')
  })
})

describe('slowClock', () => {
  it('makes performance.now and Date.now advance factor times slower until undone', () => {
    const realNow = Date.now
    const undo = slowClock(100)
    try {
      const start = performance.now()
      const startDate = Date.now()
      const until = realNow() + 300
      while (realNow() < until) {
        // 300 ms of real time
      }
      const slowed = performance.now() - start
      expect(slowed).toBeGreaterThan(2)
      expect(slowed).toBeLessThan(10)
      // Whole milliseconds, about 3 of them.
      const slowedDate = Date.now() - startDate
      expect(Number.isInteger(slowedDate)).toBe(true)
      expect(slowedDate).toBeGreaterThanOrEqual(2)
      expect(slowedDate).toBeLessThan(10)
    } finally {
      undo()
    }
    expect(Date.now).toBe(realNow)
    const start = performance.now()
    const until = Date.now() + 30
    while (Date.now() < until) {
      // 30 ms again, on the real clock
    }
    expect(performance.now() - start).toBeGreaterThanOrEqual(25)
  })

  it('refuses a factor below 1', () => {
    expect(() => slowClock(0.5)).toThrow('BENCH_CLOCK_SCALE must be at least 1, got 0.5')
  })
})

describe('counted growth', () => {
  it('measures the tenths the timed growth row compares', () => {
    expect(growthPoints(10_000)).toEqual([4_500, 5_500, 9_000, 10_000])
    expect(growthPoints(1_000)).toEqual([450, 550, 900, 1_000])
  })

  it('refuses a turn too short to have a middle and a last tenth apart', () => {
    expect(growthPoints(3)).toEqual([1, 2, 2, 3])
    expect(() => growthPoints(2)).toThrow('growthPoints: a 2-step turn has no separate middle and last tenth')
  })

  it('divides the last tenth per step by the middle tenth per step, per event', () => {
    const totals = [
      { Ir: 1_000, I1mr: 100 },
      { Ir: 3_000, I1mr: 200 },
      { Ir: 10_000, I1mr: 500 },
      { Ir: 12_500, I1mr: 600 },
    ] as const
    const growth = countedGrowth([4, 6, 9, 11], totals)
    expect(growth.middle).toEqual({ Ir: 1_000, I1mr: 50 })
    expect(growth.last).toEqual({ Ir: 1_250, I1mr: 50 })
    expect(growth.growth).toEqual({ Ir: 1.25, I1mr: 1 })
  })
})
