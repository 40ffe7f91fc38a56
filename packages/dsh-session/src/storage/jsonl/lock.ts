/**
 * A cross-process write lease held as a lock file: `{pid, hostname, token}` appears at the lock path
 * atomically (hard link of a fully written temp file, which fails if the path exists), so a reader
 * never sees a half-written owner. A lock whose holder is a dead process on this host is taken over.
 */
import { randomBytes } from 'node:crypto'
import { link, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { SessionError, SessionErrorCode } from '../../errors.ts'

/** Who holds a lock. */
export interface LockOwner {
  readonly pid: number
  readonly hostname: string
  /** Random per acquisition: tells two holders in one process apart. */
  readonly token: string
  readonly acquiredAt: number
}

/** What a lock protects, for error messages. */
export interface LockSubject {
  readonly sessionId: string
  readonly file: string
}

/**
 * Lock files appear complete (hard link), so an unreadable one is debris of a machine crash. One younger
 * than this is still treated as held, in case a clock or file system is odd.
 */
const UNREADABLE_GRACE_MS = 2_000
const MAX_ATTEMPTS = 8

/** A held lock. Release it once; releasing removes the file only while it is still this holder's. */
export class FileLock {
  private constructor(
    readonly path: string,
    readonly owner: LockOwner,
  ) {}

  /**
   * Takes the lock at `path`, taking over a stale one. Throws `SessionError` `LOCKED` naming the
   * session, its file and the holder's pid and host when a live holder (or one on another host, whose
   * liveness cannot be checked) has it; `STORAGE` for file-system failures.
   */
  static async acquire(path: string, subject: LockSubject): Promise<FileLock> {
    const owner: LockOwner = {
      pid: process.pid,
      hostname: hostname(),
      token: randomBytes(12).toString('hex'),
      acquiredAt: Date.now(),
    }
    const temp = `${path}.${owner.token}.tmp`
    await writeFile(temp, JSON.stringify(owner), { flag: 'wx' })
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (await placeExclusive(temp, path)) return new FileLock(path, owner)
        const found = await readOwner(path)
        switch (found.kind) {
          case 'missing':
            continue
          case 'owner':
            if (isAlive(found.owner)) throw lockedError(subject, path, found.owner)
            await removeStale(path, found.owner.token, owner.token)
            continue
          case 'unreadable':
            if (found.ageMs < UNREADABLE_GRACE_MS) throw lockedError(subject, path, undefined)
            await removeStale(path, undefined, owner.token)
            continue
        }
      }
      throw lockedError(subject, path, undefined)
    } finally {
      await unlink(temp).catch(() => undefined)
    }
  }

  /** Removes the lock file if it still names this holder; a no-op otherwise. */
  async release(): Promise<void> {
    const found = await readOwner(this.path)
    if (found.kind === 'owner' && found.owner.token === this.owner.token) {
      await unlink(this.path).catch(ignoreMissing)
    }
  }
}

type ReadResult =
  | { readonly kind: 'missing' }
  | { readonly kind: 'owner'; readonly owner: LockOwner }
  | { readonly kind: 'unreadable'; readonly ageMs: number }

/** Reads the holder of the lock at `path`. */
export async function readOwner(path: string): Promise<ReadResult> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { kind: 'missing' }
    throw error
  }
  try {
    const value = JSON.parse(text) as Partial<LockOwner>
    if (
      typeof value.pid === 'number' &&
      typeof value.hostname === 'string' &&
      typeof value.token === 'string'
    ) {
      return {
        kind: 'owner',
        owner: {
          pid: value.pid,
          hostname: value.hostname,
          token: value.token,
          acquiredAt: Number(value.acquiredAt),
        },
      }
    }
  } catch {
    // Not JSON: fall through to unreadable.
  }
  try {
    return { kind: 'unreadable', ageMs: Date.now() - (await stat(path)).mtimeMs }
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { kind: 'missing' }
    throw error
  }
}

/** Puts the fully written `temp` at `path` unless `path` exists. Returns false if it exists. */
async function placeExclusive(temp: string, path: string): Promise<boolean> {
  try {
    await link(temp, path)
    return true
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false
    throw error
  }
}

/**
 * Removes the lock at `path` if it is still the stale one that was judged (same token, or still
 * unreadable). It is first moved aside, so two processes reclaiming at once cannot remove a fresh lock:
 * one that is moved aside by mistake is put back.
 */
async function removeStale(path: string, staleToken: string | undefined, myToken: string): Promise<void> {
  const aside = `${path}.${myToken}.stale`
  try {
    await rename(path, aside)
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return
    throw error
  }
  try {
    const moved = await readOwner(aside)
    const same =
      staleToken === undefined
        ? moved.kind === 'unreadable'
        : moved.kind === 'owner' && moved.owner.token === staleToken
    if (!same) await link(aside, path).catch(() => undefined)
  } finally {
    await unlink(aside).catch(ignoreMissing)
  }
}

/** Whether the holder may be alive: always true for another host, whose processes cannot be checked. */
function isAlive(owner: LockOwner): boolean {
  if (owner.hostname !== hostname()) return true
  if (owner.pid === process.pid) return true
  try {
    process.kill(owner.pid, 0)
    return true
  } catch (error) {
    return errorCode(error) === 'EPERM'
  }
}

function lockedError(subject: LockSubject, path: string, owner: LockOwner | undefined): SessionError {
  const holder = owner === undefined ? 'another writer' : `pid ${owner.pid} on ${owner.hostname}`
  return new SessionError(
    SessionErrorCode.LOCKED,
    `session ${subject.sessionId} (${subject.file}) is locked by ${holder}; lock file ${path}`,
    { sessionId: subject.sessionId, file: subject.file },
  )
}

/** The `code` of a Node system error, if any. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined
}

function ignoreMissing(error: unknown): void {
  if (errorCode(error) !== 'ENOENT') throw error
}
