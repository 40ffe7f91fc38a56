/**
 * The process-wide time slice. Every agent's loop asks `sliceSpent()` at each streamed chunk and
 * each step start; once the current event-loop turn has run agent work for `SLICE_MS`, the answer is
 * yes and the agent awaits `nextSlice()` (a macrotask), so timers, I/O and the other agents run
 * before it continues. Without it, 1,000 agents whose responses arrive together run back to back in
 * one event-loop turn (every expired timer and all of its microtasks) and block the loop for
 * hundreds of milliseconds.
 *
 * A turn of the event loop is recognised by an immediate scheduled at its first check: until that
 * immediate runs, the slice is the same one.
 */
import { setImmediate } from 'node:timers'

/** How long agent work may hold one event-loop turn, ms. */
export const SLICE_MS = 1

interface SliceState {
  start: number
  open: boolean
}

/**
 * Kept on `globalThis` under a registered symbol, so the slice is one per process even when two
 * copies of this package are loaded (a bundle next to the package, two versions in one tree).
 */
const KEY = Symbol.for('dsh-agent-loop.time-slice')
const registry = globalThis as Record<symbol, SliceState | undefined>
const slice: SliceState = registry[KEY] ?? { start: 0, open: false }
registry[KEY] = slice

function closeSlice(): void {
  slice.open = false
}

/**
 * True when agent work has held the current event-loop turn for `SLICE_MS` or longer; the first
 * call of a turn starts its slice. Cheap: one clock read.
 */
export function sliceSpent(): boolean {
  const now = performance.now()
  if (!slice.open) {
    slice.open = true
    slice.start = now
    setImmediate(closeSlice)
    return false
  }
  return now - slice.start >= SLICE_MS
}

/** Resolves in a later event-loop turn (after the pending immediates, timers and I/O callbacks). */
export function nextSlice(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
