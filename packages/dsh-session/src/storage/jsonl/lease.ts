/**
 * What a JSONL writer holds for one session: the lock, the identity (device + inode) of the file it
 * owns, its append handle and offset. Before each write it checks that both are still its own.
 */
import { statSync } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import type { FileLock } from './lock.ts'

/** A file's identity: the same path can name another file after a rename or replace. */
export interface FileIdentity {
  readonly dev: number
  readonly ino: number
}

/** A session whose lease this storage holds. */
export interface Lease {
  readonly lock: FileLock
  /** The session file's path, kept so that an append does no path work. */
  readonly file: string
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
 * Throws (and records as the lease's failure, so the writer stays stopped) `LEASE_LOST` if the lock
 * was taken over, or `FILE_REPLACED` if the session file is gone or is another file than the one the
 * lease was taken on. Two `stat` calls.
 */
export function assertStillOwned(lease: Lease, sessionId: string, file: string): void {
  if (lease.failure !== undefined) throw lease.failure
  let held: boolean
  let found: FileIdentity | undefined
  try {
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
