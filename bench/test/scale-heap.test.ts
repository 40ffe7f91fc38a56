import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { beforeAll, describe, expect, it } from 'vitest'
import { measureScaleRun, type ScaleRun } from '../src/scenarios/scale.ts'

beforeAll(() => {
  const holder = globalThis as { gc?: () => void }
  if (holder.gc === undefined) {
    setFlagsFromString('--expose-gc')
    holder.gc = runInNewContext('gc') as () => void
  }
})

/** A run of `agents` do-nothing agents whose `verify` reads a large value through a `WeakRef`. */
function weakReadingRun(agents: number): ScaleRun {
  return {
    agents: Array.from({ length: agents }, (_, i) => ({ i })),
    start: async () => {},
    verify: () => {
      // A `WeakRef` keeps its target alive until the end of the current job (like a session's
      // events snapshot read in `verify`): 8 MB that no agent holds once the job ends.
      const big = new Array<number>(1_000_000).fill(1.5)
      new WeakRef(big).deref()
    },
  }
}

describe('scale heap per idle agent', () => {
  it('does not count what verify kept alive only until the end of its job (WeakRef targets)', async () => {
    const result = await measureScaleRun(async (agents) => weakReadingRun(agents), 10, 1)
    // 8 MB over 10 agents would read ~800 KB per agent; the agents themselves hold a few bytes.
    expect(result.heapPerAgentKb).toBeLessThan(50)
  })
})
