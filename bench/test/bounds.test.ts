/** The step-cost bound judges the median of the paired runs' ratios, not the ratio of medians. */
import { describe, expect, it } from 'vitest'
import { measureAgain, STEP_RATIO_MAX, violations } from '../src/bounds.ts'
import { row } from '../src/report.ts'

const stepBound = { id: 'loop-wall-vs-pi', on: 'paired', max: STEP_RATIO_MAX, why: 'test' } as const

describe('paired step-cost bound', () => {
  it('takes the median of each run over the baseline beside it', () => {
    // The baseline's fast middle run makes the ratio of medians 250 / 80 = 3.13; run by run the
    // ratios are 250/125 = 2.0, 240/80 = 3.0 and 260/130 = 2.0, whose median is 2.0.
    const r = row({
      id: 'loop-wall-vs-pi',
      scenario: '1 tool loop',
      metric: 'in-memory, wall µs/step (median)',
      dsh: 250,
      baselineName: 'pi-agent-core',
      baseline: 80,
      runs: { dsh: [250, 240, 260], baseline: [125, 80, 130] },
    })
    expect(r.ratio).toBeCloseTo(3.125, 6)
    expect(r.pairedRatio).toBeCloseTo(2, 6)
    expect(violations([r], [stepBound])).toEqual([])
    expect(violations([r], [{ ...stepBound, on: 'ratio' }])).toEqual([
      `loop-wall-vs-pi: ratio 3.13 exceeds the bound ${STEP_RATIO_MAX} (test)`,
    ])
  })

  it('fails when every paired run is over the bound, naming the paired ratio', () => {
    const r = row({
      id: 'loop-wall-vs-pi',
      scenario: '1 tool loop',
      metric: 'in-memory, wall µs/step (median)',
      dsh: 500,
      baselineName: 'pi-agent-core',
      baseline: 100,
      runs: { dsh: [500, 480, 520], baseline: [100, 100, 100] },
    })
    expect(violations([r], [stepBound])).toEqual([
      `loop-wall-vs-pi: ratio (paired runs) 5.00 exceeds the bound ${STEP_RATIO_MAX} (test)`,
    ])
  })
})

describe('a violation while the baseline disagreed with itself', () => {
  const growthBound = { id: 'loop-growth', on: 'dsh', max: 1.5, why: 'test' } as const
  const growth = (dsh: number, baseline: readonly number[]) =>
    row({
      id: 'loop-growth',
      scenario: '1 tool loop',
      metric: 'in-memory, growth',
      dsh,
      baselineName: 'pi-agent-core',
      baseline: baseline[1] ?? 1,
      runs: { dsh: baseline.map(() => dsh), baseline },
    })

  it('is measured again when every violated row had a noisy baseline (its runs over 1.5× apart)', () => {
    // Like the CI run that failed: dsh 1.57 beside pi-agent-core runs 1.93× apart.
    const noisy = growth(1.57, [0.76, 1.47, 1.2])
    expect(violations([noisy], [growthBound])).toHaveLength(1)
    expect(measureAgain([noisy], [growthBound])).toBe(true)
  })

  it('fails at once when a violated row had a steady baseline, or when nothing is violated', () => {
    const steady = growth(1.57, [0.9, 1.0, 1.1])
    const noisyButHeld = growth(1.2, [0.76, 1.47, 1.2])
    expect(measureAgain([steady], [growthBound])).toBe(false)
    expect(measureAgain([steady, growth(1.6, [0.76, 1.47, 1.2])], [growthBound])).toBe(false)
    expect(measureAgain([noisyButHeld], [growthBound])).toBe(false)
  })
})
