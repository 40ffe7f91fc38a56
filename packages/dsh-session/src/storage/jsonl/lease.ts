/**
 * What a JSONL writer holds for one session: the lock, the identity (device + inode) of the file it
 * owns, its append handle and offset. Before each write it checks that both are still its own — by
 * their paths, or, once the session folder has been quiet, by the folder alone (see `QuietFolder`).
 */
import { type Stats, statSync } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import type { FileLock } from './lock.ts'

/** A file's identity: the same path can name another file after a rename or replace. */
export interface FileIdentity {
  readonly dev: number
  readonly ino: number
}

/**
 * The session folder as the last full check (lock and file, by path) saw it: its identity and
 * mtime, when that mtime was first seen (`performance.now()`), and whether it is quiet — seen
 * unchanged by two full checks at least `quietAfterMs` apart. While the folder is quiet and stats
 * the same, no entry in it was created, removed or renamed since those checks, so the lock and the
 * file still have the paths they were found at, and the two path `stat`s are skipped.
 */
export interface QuietFolder {
  readonly dev: number
  readonly ino: number
  readonly mtimeMs: number
  readonly since: number
  quiet: boolean
}

/** A session whose lease this storage holds. */
export interface Lease {
  readonly lock: FileLock
  /** The session file's path, kept so that an append does no path work. */
  readonly file: string
  /** The folder holding the file and the lock. */
  readonly dir: string
  /** What the last full check saw of `dir` (see `QuietFolder`); unset until one passed. */
  folder?: QuietFolder | undefined
  /** The identity of the session file when the lease was taken (or the file created). */
  identity?: FileIdentity | undefined
  handle?: FileHandle
  /** The seq the next appended event must have; unknown until the file's tail has been read. */
  nextSeq?: number
  /** The file's header is format version 1: appends write event lines only (no run lines). */
  eventLinesOnly?: boolean
  /** The file's size through the last durable batch: where a failed batch is cut back to. */
  size: number
  /** Appends run one after another, in call order: this settles when the last one queued has. */
  queue: Promise<void>
  /** Appends queued or running; 0 means the next one may start at once. */
  pending: number
  /** Ends one append's turn (`pending--`): one function per lease, so tracking an append allocates none. */
  readonly settled: () => void
  /** An append failed and its partial write could not be cut back: the next append cuts back first. */
  unsettled?: boolean
  /** Set once the writer must stop (lease lost, file replaced, tail unknown); every later append throws it. */
  failure?: SessionError
}

const IF_PRESENT = { throwIfNoEntry: false } as const

/** The identity of `file` now, or `undefined` if nothing is there. Synchronous: one `stat`. */
export function identityOf(file: string): FileIdentity | undefined {
  const found = statSync(file, IF_PRESENT)
  return found === undefined ? undefined : { dev: found.dev, ino: found.ino }
}

/** Whether two identities name the same file. */
export function sameFile(a: FileIdentity | undefined, b: FileIdentity | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino
}

/**
 * How long a folder's mtime must stay the same between two full checks before it counts as quiet:
 * longer than one tick of the file system's timestamps, so that a later change cannot carry the
 * mtime already seen. Linux file systems stamp from a clock of at most 10 ms ticks; a folder whose
 * mtime is a whole second may be on one that keeps seconds (FAT keeps two).
 */
export const QUIET_AFTER_MS = 100
const QUIET_AFTER_COARSE_MS = 3_000

/**
 * Throws (and records as the lease's failure, so the writer stays stopped) `LEASE_LOST` if the lock
 * was taken over, or `FILE_REPLACED` if the session file is gone or is another file than the one the
 * lease was taken on. One `stat` of the folder; two more (the lock's and the file's paths) unless
 * the folder is quiet and unchanged (see `QuietFolder`): a takeover, rename, removal or replacement
 * of either changes the folder's mtime, and so is found by the next check as before.
 */
export function assertStillOwned(lease: Lease, sessionId: string, file: string): void {
  if (lease.failure !== undefined) throw lease.failure
  let held: boolean
  let found: FileIdentity | undefined
  let folder: Stats | undefined
  try {
    folder = statSync(lease.dir, IF_PRESENT)
    const seen = lease.folder
    if (seen?.quiet && folder !== undefined && sameFolder(seen, folder)) return
    held = lease.lock.held()
    found = lease.identity === undefined ? undefined : identityOf(file)
  } catch (error) {
    throw new SessionError(
      SessionErrorCode.STORAGE,
      `session ${sessionId} (${file}): cannot check the lease and file before writing: ${String(error)}`,
      { sessionId, file },
      { cause: error },
    )
  }
  if (!held) {
    lease.failure = new SessionError(
      SessionErrorCode.LEASE_LOST,
      `session ${sessionId} (${file}): another writer took over the lease (${lease.lock.path}); this writer stopped and writes nothing more`,
      { sessionId, file },
    )
    throw lease.failure
  }
  if (lease.identity !== undefined) assertSameFile(lease, sessionId, file, found)
  noteFolder(lease, folder)
}

function sameFolder(seen: QuietFolder, now: Stats): boolean {
  return seen.mtimeMs === now.mtimeMs && seen.ino === now.ino && seen.dev === now.dev
}

/**
 * After a full check passed: records the folder as it was stat'ed before that check. The same mtime
 * seen again by a full check at least the quiet period after it was first seen makes it quiet: a
 * change after that check is more than a timestamp tick after the change that set the mtime, so it
 * sets another one.
 */
function noteFolder(lease: Lease, folder: Stats | undefined): void {
  if (folder === undefined) {
    lease.folder = undefined
    return
  }
  const now = performance.now()
  const seen = lease.folder
  if (seen !== undefined && sameFolder(seen, folder)) {
    const after = folder.mtimeMs % 1000 === 0 ? QUIET_AFTER_COARSE_MS : QUIET_AFTER_MS
    if (now - seen.since >= after) seen.quiet = true
    return
  }
  lease.folder = { dev: folder.dev, ino: folder.ino, mtimeMs: folder.mtimeMs, since: now, quiet: false }
}

/** `FILE_REPLACED` (recorded on the lease) unless `found` is the file the lease was taken on. */
export function assertSameFile(
  lease: Lease,
  sessionId: string,
  file: string,
  found: FileIdentity | undefined,
): void {
  if (lease.identity === undefined || sameFile(lease.identity, found)) return
  const now = found === undefined ? 'nothing is there now' : `it is now ${found.dev}:${found.ino}`
  lease.failure = new SessionError(
    SessionErrorCode.FILE_REPLACED,
    `session ${sessionId} (${file}): the file was removed, renamed or replaced under its writer (it was ${lease.identity.dev}:${lease.identity.ino}, ${now}); the writer stopped and writes nothing more`,
    { sessionId, file },
  )
  throw lease.failure
}
