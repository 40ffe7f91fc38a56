/**
 * The process-wide time slice: one budget per event-loop turn for work that runs in many small
 * pieces. The agent loop asks `sliceSpent()` before each streamed chunk it logs and at each step
 * start; a storage writer's `ready()` asks it for a producer that never waits on the backend. Once
 * such work has held the current event-loop turn for `SLICE_MS`, the answer is yes and the worker
 * awaits `nextSlice()` (a macrotask), so timers, I/O and the other workers run before it continues.
 * Without it, 1,000 agents whose responses arrive together run back to back in one event-loop turn
 * (every expired timer and all of its microtasks) and block the loop for hundreds of milliseconds.
 *
 * A turn of the event loop is recognised by an immediate scheduled at its first check: until that
 * immediate runs, the slice is the same one. Waiters form one FIFO queue; each later turn resumes
 * them in order, one per immediate, while its slice has room, and the rest wait without being woken.
 *
 * The clock is `Date.now`, the clock of event times: the agent loop reads it once per streamed
 * chunk, for the slice check, and hands the same reading (`sliceReading()`) to the chunk's append as
 * its time. A clock read costs about 150 ns on a virtual machine, a fifth of a chunk's whole append.
 * It reads whole milliseconds, so a slice lasts more than `SLICE_MS` and at most `SLICE_MS` + 1 ms;
 * a wall clock set back makes the slice last until the event-loop turn ends, one turn at most.
 */
// `setImmediate` is imported, not the global, so a test's fake timers do not capture it.
import { setImmediate } from 'node:timers'

/**
 * How long sliced work (agents, `ready()` callers) may hold one event-loop turn, ms: the slice is
 * spent once more than this has passed on the millisecond clock (so after 1 to 2 ms).
 */
export const SLICE_MS = 1

interface SliceState {
  start: number
  /** The latest reading a `sliceSpent` call took (`Date.now`). */
  reading: number
  open: boolean
  /** Agents waiting for a slice (their resume callbacks), oldest first from `head` on. */
  readonly waiting: ((() => void) | undefined)[]
  head: number
  /** Release immediates scheduled for the coming event-loop turn. */
  scheduled: number
  /** How many release immediates a turn gets: adapted to how many waiters the last turn resumed. */
  batch: number
  /** Waiters resumed in the current turn, and whether a release found the slice spent. */
  released: number
  full: boolean
}

/**
 * Kept on `globalThis` under a registered symbol, so the slice is one per process even when two
 * copies of this package are loaded (a bundle next to the package, two versions in one tree).
 */
const KEY = Symbol.for('dsh-session.time-slice.v2')
const registry = globalThis as Record<symbol, SliceState | undefined>
const slice: SliceState = registry[KEY] ?? {
  start: 0,
  reading: 0,
  open: false,
  waiting: [],
  head: 0,
  scheduled: 0,
  batch: 1,
  released: 0,
  full: false,
}
registry[KEY] = slice

function closeSlice(): void {
  slice.open = false
}

/**
 * True when sliced work has held the current event-loop turn for more than `SLICE_MS`; the first
 * call of a turn starts its slice. Cheap: one clock read (`Date.now`, kept as `sliceReading()`).
 * Shared by every caller in the process.
 */
export function sliceSpent(): boolean {
  const now = Date.now()
  slice.reading = now
  if (!slice.open) {
    slice.open = true
    slice.start = now
    setImmediate(closeSlice)
    return false
  }
  return now - slice.start > SLICE_MS
}

/**
 * The `Date.now()` reading the latest `sliceSpent()` call took: for a caller that checked the slice
 * and appends at once, in the same synchronous run, as the appended chunk's time (see
 * `Session.appendChunk`), instead of reading the clock a second time.
 */
export function sliceReading(): number {
  return slice.reading
}

/**
 * Resolves in a later event-loop turn (after the pending immediates, timers and I/O callbacks),
 * once the callers that waited before this one have had theirs: waiters resume in FIFO order, each
 * from an immediate of its own (so it runs alone until it waits again), while the slice lasts.
 * Never rejects.
 */
export function nextSlice(): Promise<void> {
  return new Promise((resolve) => {
    slice.waiting.push(resolve)
    if (slice.scheduled === 0) schedule()
  })
}

/** Schedules the coming turn's release immediates. */
function schedule(): void {
  slice.scheduled = slice.batch
  slice.released = 0
  slice.full = false
  for (let i = 0; i < slice.batch; i++) setImmediate(releaseOne)
}

/**
 * Resumes the oldest waiter unless the slice is spent. A waiter is never woken only to find the slice
 * spent and wait again: with hundreds of agents waiting, that cost more than their work. The last
 * release of a turn sizes the next turn's batch (one more than this turn resumed; twice as many when
 * every release found room and waiters remain) and schedules it while waiters remain.
 */
function releaseOne(): void {
  slice.scheduled--
  const { waiting } = slice
  if (!slice.full && slice.head < waiting.length) {
    if (sliceSpent()) {
      slice.full = true
    } else {
      const resume = waiting[slice.head]
      waiting[slice.head] = undefined
      slice.head++
      slice.released++
      resume?.()
    }
  }
  if (slice.scheduled > 0) return
  if (slice.head >= waiting.length) {
    waiting.length = 0
    slice.head = 0
  } else if (slice.head >= 1024 && slice.head * 2 >= waiting.length) {
    // Drop the resumed prefix now and then, so a queue that never empties does not grow.
    waiting.splice(0, slice.head)
    slice.head = 0
  }
  const remaining = slice.head < waiting.length
  if (slice.full) slice.batch = slice.released + 1
  else if (remaining) slice.batch = Math.min(1024, slice.batch * 2)
  else slice.batch = Math.max(1, slice.released)
  if (remaining) schedule()
}
