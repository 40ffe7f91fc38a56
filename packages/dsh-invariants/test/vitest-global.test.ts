/** The global setup's totals file: per run, summarized at teardown, and not left behind. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { setup, teardown } from '../src/vitest-global.ts'

const saved = process.env.DSH_INVARIANTS_TOTALS
afterEach(() => {
  if (saved === undefined) delete process.env.DSH_INVARIANTS_TOTALS
  else process.env.DSH_INVARIANTS_TOTALS = saved
  const holder = globalThis as Record<symbol, unknown>
  delete holder[Symbol.for('dsh-invariants/global-setup')]
  delete holder[Symbol.for('dsh-invariants/global-teardown')]
  delete holder[Symbol.for('dsh-invariants/global-picked')]
  vi.restoreAllMocks()
})

const line = {
  file: 'a.test.ts',
  registries: 2,
  requestsChecked: 3,
  requestsOutsideSteps: 0,
  eventsChecked: 40,
  streamsChecked: 3,
  unexpectedViolations: 0,
}

describe('dsh-invariants/vitest-global', () => {
  it('picks a totals file for the run under <tmpdir>/dsh-invariants, writes summary.txt beside it and removes the totals file', () => {
    delete process.env.DSH_INVARIANTS_TOTALS
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
    setup()
    const file = process.env.DSH_INVARIANTS_TOTALS ?? ''
    expect(dirname(file)).toBe(join(tmpdir(), 'dsh-invariants'))
    expect(file).toMatch(/totals-\d+-\d+\.jsonl$/)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, `${JSON.stringify(line)}\n`)
    teardown()
    const summary =
      'dsh-invariants: 3 requests re-derived, 0 more sent outside loop steps (not re-derived), 40 events and 3 streams checked by 2 registries across 1 test files; 0 unexpected violations\n'
    expect(stdout).toHaveBeenCalledWith(summary)
    expect(readFileSync(join(dirname(file), 'summary.txt'), 'utf8')).toBe(summary)
    expect(existsSync(file)).toBe(false)
  })

  it('keeps a totals file the user named with DSH_INVARIANTS_TOTALS', () => {
    const file = join(tmpdir(), `dsh-inv-own-${process.pid}`, 'totals.jsonl')
    process.env.DSH_INVARIANTS_TOTALS = file
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
    setup()
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, `${JSON.stringify(line)}\n`)
    teardown()
    expect(existsSync(file)).toBe(true)
  })
})
