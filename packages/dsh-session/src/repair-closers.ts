/**
 * The seam for package-defined repair: a package whose events bracket work that a crash can leave
 * half done (a compaction's start without its end) registers a closer, and every load and fork
 * commits what the closers return before the interrupted turn's own closers.
 */
import { compactionClosers } from './compaction-repair.ts'
import { SessionError } from './errors.ts'
import { interruptedTurnClosers } from './repair.ts'
import type { SessionEvent, SessionEventInput, SurfaceMeta } from './types.ts'

/** One repair event: a type and payload, with surface metadata when it changes the surface. */
export type RepairEvent = SessionEventInput & { readonly surface?: SurfaceMeta }

/**
 * A package's closer: given a log, the deterministic events that close the package's work left open
 * at its end (none when nothing is open). Must be a pure function of `events`, so repairing one
 * file twice writes the same events.
 */
export type RepairCloser = (events: readonly SessionEvent[]) => readonly RepairEvent[]

const closers = new Map<string, RepairCloser>()

/**
 * Registers `closer` under `key` (a package name) for every session of the process. Returns a
 * disposer that removes it. Throws `DUPLICATE_REPAIR_CLOSER` when `key` is taken.
 */
export function registerRepairCloser(key: string, closer: RepairCloser): () => void {
  if (closers.has(key)) {
    throw new SessionError('DUPLICATE_REPAIR_CLOSER', `repair closer ${key} is already registered`)
  }
  closers.set(key, closer)
  return () => {
    if (closers.get(key) === closer) closers.delete(key)
  }
}

/**
 * What the catalog's own bracketed work (an open compaction) and then the registered package closers
 * return for `events`, in registration order.
 */
export function packageClosers(events: readonly SessionEvent[]): RepairEvent[] {
  const out: RepairEvent[] = compactionClosers(events)
  for (const closer of closers.values()) out.push(...closer(events))
  return out
}

/**
 * Every event repair commits for `events`: the package closers (in registration order), then
 * `interruptedTurnClosers` over the same events. A package closer's events are appended before the
 * turn is closed, so they may stand inside it; they must not be tool results.
 */
export function repairClosers(events: readonly SessionEvent[]): RepairEvent[] {
  const first = packageClosers(events)
  return [...first, ...interruptedTurnClosers(events)]
}
