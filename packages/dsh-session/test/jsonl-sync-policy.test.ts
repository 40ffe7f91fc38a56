import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import { FIRST_PROBATION, JsonlStorage, type JsonlSyncMode, type SyncCalls, SyncPolicy } from 'dsh-session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { header, tempDir, userEvents } from './fixtures/events.ts'

/** Scripted system calls: each inline sync takes `nextInlineMs` of the fake clock; pooled ones wait. */
function fakeCalls() {
  const log: string[] = []
  const pending: ((error: Error | null) => void)[] = []
  const state = { clock: 0, nextInlineMs: 0.3, inlineError: undefined as Error | undefined }
  const calls: SyncCalls = {
    syncInline: (fd) => {
      log.push(`inline ${fd}`)
      state.clock += state.nextInlineMs
      if (state.inlineError !== undefined) throw state.inlineError
    },
    syncPooled: (fd, done) => {
      log.push(`pooled ${fd}`)
      pending.push(done)
    },
    now: () => state.clock,
  }
  return { calls, log, pending, state }
}

describe('SyncPolicy', () => {
  it('auto syncs inline while every sync is within the budget', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('auto', fake.calls, { budgetMs: 2, backoffMs: 1000 })
    for (let i = 0; i < 3; i++) await policy.sync(7)
    expect(fake.log).toEqual(['inline 7', 'inline 7', 'inline 7'])
  })

  it('auto tolerates one late inline sync while the moving average stays within the budget', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('auto', fake.calls, { budgetMs: 2, backoffMs: 1000 })
    fake.state.nextInlineMs = 0.5
    await policy.sync(3)
    // 0.5 + (6 − 0.5) / 5 = 1.6 ms: still inline.
    fake.state.nextInlineMs = 6
    await policy.sync(3)
    expect(policy.nextIsInline).toBe(true)
    // 1.6 + (6 − 1.6) / 5 = 2.48 ms: over the budget.
    await policy.sync(3)
    expect(policy.nextIsInline).toBe(false)
    expect(fake.log).toEqual(['inline 3', 'inline 3', 'inline 3'])
  })

  it('auto moves to the thread pool for the back-off once inline syncs are slow, then back', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('auto', fake.calls, { budgetMs: 2, backoffMs: 1000 })
    fake.state.nextInlineMs = 5
    await policy.sync(3)
    expect(policy.nextIsInline).toBe(false)
    const second = policy.sync(3)
    expect(fake.log).toEqual(['inline 3', 'pooled 3'])
    fake.pending.shift()?.(null)
    await second
    fake.state.clock += 999
    expect(policy.nextIsInline).toBe(false)
    fake.state.clock += 2
    fake.state.nextInlineMs = 0.2
    await policy.sync(3)
    expect(fake.log).toEqual(['inline 3', 'pooled 3', 'inline 3'])
  })

  /** Runs `count` pooled syncs one after another, each taking `ms` of the fake clock. */
  async function pooledSyncs(
    fake: ReturnType<typeof fakeCalls>,
    policy: SyncPolicy,
    count: number,
    ms: number,
  ) {
    for (let i = 0; i < count; i++) {
      const sync = policy.sync(3)
      fake.state.clock += ms
      fake.pending.shift()?.(null)
      await sync
    }
  }

  it('auto returns inline before the back-off ends once enough pooled syncs were fast', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('auto', fake.calls, { budgetMs: 2, backoffMs: 1000 })
    fake.state.nextInlineMs = 12
    await policy.sync(3)
    await pooledSyncs(fake, policy, FIRST_PROBATION - 1, 0.4)
    expect(policy.nextIsInline).toBe(false)
    await pooledSyncs(fake, policy, 1, 0.4)
    expect(policy.nextIsInline).toBe(true)
    // Well inside the 1,000 ms back-off: 12 + 16 × 0.4 ms of fake time have passed.
    expect(fake.state.clock).toBeLessThan(100)
    fake.state.nextInlineMs = 0.3
    await policy.sync(3)
    expect(fake.log.filter((l) => l.startsWith('pooled'))).toHaveLength(FIRST_PROBATION)
    expect(fake.log.at(-1)).toBe('inline 3')
  })

  it('auto stays on the thread pool while the pooled syncs are slow', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('auto', fake.calls, { budgetMs: 2, backoffMs: 1000 })
    fake.state.nextInlineMs = 12
    await policy.sync(3)
    // 1.5 ms each: within the budget but not within half of it.
    await pooledSyncs(fake, policy, 4 * FIRST_PROBATION, 1.5)
    expect(policy.nextIsInline).toBe(false)
  })

  it('auto asks for twice the fast pooled syncs when the disk turns slow again soon after a return', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('auto', fake.calls, { budgetMs: 2, backoffMs: 1000 })
    fake.state.nextInlineMs = 12
    await policy.sync(3)
    await pooledSyncs(fake, policy, FIRST_PROBATION, 0.4)
    expect(policy.nextIsInline).toBe(true)
    await policy.sync(3) // slow again, within the back-off of the return
    await pooledSyncs(fake, policy, 2 * FIRST_PROBATION - 1, 0.4)
    expect(policy.nextIsInline).toBe(false)
    await pooledSyncs(fake, policy, 1, 0.4)
    expect(policy.nextIsInline).toBe(true)
    // Slow again long after the return: the probation starts over.
    fake.state.clock += 5000
    await policy.sync(3)
    await pooledSyncs(fake, policy, FIRST_PROBATION, 0.4)
    expect(policy.nextIsInline).toBe(true)
  })

  it('auto keeps a sync off the event loop while a pooled one is still running', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('auto', fake.calls, { budgetMs: 2, backoffMs: 10 })
    fake.state.nextInlineMs = 3
    await policy.sync(1)
    const first = policy.sync(1)
    fake.state.clock += 50
    const second = policy.sync(2)
    expect(fake.log).toEqual(['inline 1', 'pooled 1', 'pooled 2'])
    for (const done of fake.pending.splice(0)) done(null)
    await Promise.all([first, second])
    expect(policy.nextIsInline).toBe(true)
  })

  it('an inline failure rejects the returned promise instead of throwing', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('inline', fake.calls)
    const failure = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
    fake.state.inlineError = failure
    let returned: Promise<void> | undefined
    expect(() => {
      returned = policy.sync(4)
    }).not.toThrow()
    await expect(returned).rejects.toBe(failure)
  })

  it('a pooled failure rejects with the error of the call', async () => {
    const fake = fakeCalls()
    const policy = new SyncPolicy('thread-pool', fake.calls)
    const failure = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    const result = policy.sync(5)
    fake.pending.shift()?.(failure)
    await expect(result).rejects.toBe(failure)
  })

  it('inline and thread-pool never switch, however long a sync takes', async () => {
    const inline = fakeCalls()
    const always = new SyncPolicy('inline', inline.calls, { budgetMs: 1 })
    inline.state.nextInlineMs = 50
    await always.sync(1)
    await always.sync(1)
    expect(inline.log).toEqual(['inline 1', 'inline 1'])
    const pool = fakeCalls()
    const never = new SyncPolicy('thread-pool', pool.calls)
    const result = never.sync(2)
    expect(pool.log).toEqual(['pooled 2'])
    pool.pending.shift()?.(null)
    await result
  })
})

describe('JsonlStorage sync modes', () => {
  let dir: string
  let dispose: () => void
  beforeEach(() => {
    ;({ dir, dispose } = tempDir())
  })
  afterEach(() => dispose())

  for (const mode of ['auto', 'inline', 'thread-pool'] as const satisfies readonly JsonlSyncMode[]) {
    it(`${mode}: appended batches are on disk, in order, when the append resolves`, async () => {
      const storage = new JsonlStorage({ dir, sync: mode })
      const id = SessionId(`s-${mode}`)
      try {
        await storage.create(header(id))
        const events = userEvents(0, 6)
        await storage.appendBatch(id, events.slice(0, 4), 0)
        await storage.appendBatch(id, events.slice(4), 4)
        const lines = readFileSync(join(dir, `${id}.jsonl`), 'utf8')
          .trimEnd()
          .split('\n')
        expect(lines.slice(1).map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual([
          0, 1, 2, 3, 4, 5,
        ])
        expect((await storage.load(id)).events).toEqual(events)
      } finally {
        await storage.close()
      }
    })
  }
})
