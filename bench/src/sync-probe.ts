/**
 * Times every `fdatasync` of this process, for the breakdown of the JSONL tool-loop rows: how many
 * syncs a step makes, how long one takes, and how much of a step's wall time lies outside them.
 * Installed in a JSONL loop child (both `floor-jsonl` and `dsh-jsonl`, so both pay its two clock
 * reads per sync) by wrapping Node's `fs.fdatasyncSync` and `fs.fdatasync` and re-exporting them to
 * ES modules, which the floor and dsh's `JsonlStorage` import by name.
 */
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'

/** What a probe has seen so far. */
export interface SyncProbe {
  /** Syncs run inline (`fdatasyncSync`). */
  readonly inline: number
  /** Syncs run on libuv's thread pool (`fdatasync` with a callback). */
  readonly pooled: number
  /** Wall time of every finished sync, ms: inline the call, pooled from the call to its callback. */
  readonly durationsMs: readonly number[]
  /** The sum of `durationsMs`. */
  readonly totalMs: number
}

/** Wraps the process's sync calls (once; a second call returns the same probe). */
export function installSyncProbe(): SyncProbe {
  if (installed !== undefined) return installed
  const probe = { inline: 0, pooled: 0, durationsMs: [] as number[], totalMs: 0 }
  const done = (started: number) => {
    const took = performance.now() - started
    probe.durationsMs.push(took)
    probe.totalMs += took
  }
  const inline = fs.fdatasyncSync
  const pooled = fs.fdatasync
  fs.fdatasyncSync = (fd) => {
    const started = performance.now()
    probe.inline++
    try {
      inline(fd)
    } finally {
      done(started)
    }
  }
  // Only the callback form is wrapped (the one `JsonlStorage` uses); `util.promisify` is not.
  fs.fdatasync = ((fd: number, callback: fs.NoParamCallback) => {
    const started = performance.now()
    probe.pooled++
    pooled(fd, (error) => {
      done(started)
      callback(error)
    })
  }) as typeof fs.fdatasync
  syncBuiltinESMExports()
  installed = probe
  return probe
}

let installed: SyncProbe | undefined
