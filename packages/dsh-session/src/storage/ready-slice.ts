/**
 * The slice a writer's `ready()` gives producers: once callers awaiting it have held the current
 * event-loop turn for `SLICE_MS`, it resolves in the next turn instead, so a bulk producer whose
 * appends never wait on the backend still lets timers and I/O run.
 */
// Imported, not the global: Node 20's global `performance` is a lazy accessor run on every read.
import { performance } from 'node:perf_hooks'

/** How long producers awaiting `ready()` may hold one event-loop turn before it yields, ms. */
const SLICE_MS = 2
/** When the current turn's slice started, or -1 before the first `ready()` of a turn. */
let sliceStart = -1

function endSlice(): void {
  sliceStart = -1
}

/**
 * True once `ready()` callers have held the current event-loop turn for `SLICE_MS`; the first call
 * of a turn starts its slice (an immediate marks the turn's end). One clock read.
 */
export function sliceSpent(): boolean {
  const now = performance.now()
  if (sliceStart < 0) {
    sliceStart = now
    setImmediate(endSlice)
    return false
  }
  return now - sliceStart >= SLICE_MS
}

/** Resolves in the next event-loop turn (after timers and I/O). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
