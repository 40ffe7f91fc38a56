/**
 * The process-wide time slice is one per process: the agent loop's chunks and step starts and a
 * writer's `ready()` draw on the same budget per event-loop turn, even across copies of the module.
 */
import { SessionId } from 'dsh-llm'
import { MemoryStorage, SessionWriter, SLICE_MS, sliceSpent } from 'dsh-session'
import { describe, expect, it } from 'vitest'

type TimeSliceModule = typeof import('../src/time-slice.ts')

/** Starts a fresh event-loop turn, then uses up its slice as other sliced work would. */
async function spendSlice(spent: () => boolean): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  expect(spent()).toBe(false)
  const until = performance.now() + SLICE_MS + 1.5
  while (performance.now() < until) {
    // sliced work
  }
}

/** Whether `promise` settles within a few microtasks (it would if it were already resolved). */
async function settlesAtOnce(promise: Promise<unknown>): Promise<boolean> {
  let settled = false
  void promise.then(() => {
    settled = true
  })
  for (let i = 0; i < 5; i++) await Promise.resolve()
  return settled
}

describe('time slice', () => {
  it("a writer's ready() yields in a turn whose slice other work spent, and resolves in a later turn", async () => {
    const writer = new SessionWriter(new MemoryStorage(), SessionId('s1'), 0)
    await spendSlice(sliceSpent)
    const ready = writer.ready()
    expect(await settlesAtOnce(ready)).toBe(false)
    await ready
    // In the turn it resumed in, the slice has room again.
    expect(sliceSpent()).toBe(false)
  })

  it('ready() resolves at once while the slice has room', async () => {
    const writer = new SessionWriter(new MemoryStorage(), SessionId('s1'), 0)
    await new Promise((resolve) => setImmediate(resolve))
    expect(await settlesAtOnce(writer.ready())).toBe(true)
  })

  it('two copies of the module share one slice (kept on globalThis)', async () => {
    // A query makes the module loader evaluate the file again: a second copy with its own state.
    const file = new URL('../src/time-slice.ts', import.meta.url).href
    const copy = (name: string): Promise<TimeSliceModule> => import(/* @vite-ignore */ `${file}?copy=${name}`)
    const first = await copy('first')
    const second = await copy('second')
    expect(first.sliceSpent).not.toBe(second.sliceSpent)
    await spendSlice(first.sliceSpent)
    expect(second.sliceSpent()).toBe(true)
    expect(sliceSpent()).toBe(true)
  })
})
