/**
 * A cross-process write lease held as a lock file: `{pid, hostname, start, token, acquiredAt}` appears
 * at the lock path atomically (hard link of a fully written temp file, which fails if the path
 * exists), so a reader never sees a half-written owner. The holder keeps the file open and touches
 * its mtime (the heartbeat) every third of the TTL. A lock is taken over when its holder is judged
 * dead: on this host, a pid that is gone or now belongs to a later process (another start token); on
 * another host, a heartbeat older than the TTL.
 */
import { randomBytes } from 'node:crypto'
import { futimes, statSync } from 'node:fs'
import { type FileHandle, link, open, readFile, rename, stat, unlink } from 'node:fs/promises'
import { hostname } from 'node:os'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import { ownStartToken, startTokenOf } from './process-token.ts'

/** Who holds a lock. */
export interface LockOwner {
  readonly pid: number
  readonly hostname: string
  /** The holder process's start token (see `process-token.ts`); absent in locks of older versions. */
  readonly start?: string
  /** Random per acquisition: tells two holders in one process apart. */
  readonly token: string
  readonly acquiredAt: number
}

/** The default lease TTL: a lock on another host whose heartbeat is older than this is taken over. */
export const DEFAULT_LEASE_TTL_MS = 30_000

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

/**
 * Tokens of the locks this process holds now. A lock file naming this process with a token not in
 * here was left behind by a release that failed half-way: nobody holds it, so it is taken over.
 */
const heldTokens = new Set<string>()

/** A held lock. Release it once; releasing removes the file only while it is still this holder's. */
export class FileLock {
  private readonly heartbeat: NodeJS.Timeout

  private constructor(
    readonly path: string,
    readonly owner: LockOwner,
    private readonly handle: FileHandle,
    private readonly ino: number,
    ttlMs: number,
  ) {
    this.heartbeat = setInterval(() => this.beat(), Math.max(10, Math.floor(ttlMs / 3)))
    this.heartbeat.unref()
  }

  /**
   * Takes the lock at `path` (a file created with `mode`), taking over one whose holder is judged
   * dead (see the module comment).
   * Throws `SessionError` `LOCKED` naming the session, its file and the holder's pid and host when a
   * live holder has it; file-system failures propagate as they are.
   */
  static async acquire(
    path: string,
    subject: LockSubject,
    ttlMs = DEFAULT_LEASE_TTL_MS,
    mode = 0o600,
  ): Promise<FileLock> {
    const owner: LockOwner = {
      pid: process.pid,
      hostname: hostname(),
      start: ownStartToken,
      token: randomBytes(12).toString('hex'),
      acquiredAt: Date.now(),
    }
    const temp = `${path}.${owner.token}.tmp`
    const handle = await open(temp, 'wx', mode)
    let placed = false
    try {
      await handle.writeFile(JSON.stringify(owner))
      const { ino } = await handle.stat()
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (await placeExclusive(temp, path)) {
          placed = true
          heldTokens.add(owner.token)
          return new FileLock(path, owner, handle, ino, ttlMs)
        }
        const found = await readOwner(path)
        switch (found.kind) {
          case 'missing':
            continue
          case 'owner':
            if (!isDead(found.owner, found.ageMs, ttlMs)) throw lockedError(subject, path, found.owner)
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
      if (!placed) await handle.close().catch(() => undefined)
      await unlink(temp).catch(() => undefined)
    }
  }

  /** Whether the lock file at `path` is still this holder's file (a takeover replaces it). Synchronous: one stat. */
  held(): boolean {
    return statSync(this.path, { throwIfNoEntry: false })?.ino === this.ino
  }

  /**
   * Stops the heartbeat, removes the lock file if it still names this holder (a no-op otherwise) and
   * closes the lock's handle. Every step runs; the first failure is rethrown.
   */
  async release(): Promise<void> {
    clearInterval(this.heartbeat)
    heldTokens.delete(this.owner.token)
    let failure: unknown
    try {
      const found = await readOwner(this.path)
      if (found.kind === 'owner' && found.owner.token === this.owner.token) {
        await unlink(this.path).catch(ignoreMissing)
      }
    } catch (error) {
      failure = error
    }
    await this.handle.close().catch((error: unknown) => {
      failure ??= error
    })
    if (failure !== undefined) throw failure
  }

  /** Touches the lock file's mtime through this holder's own handle, so it never touches an heir's file. */
  private beat(): void {
    const now = new Date()
    futimes(this.handle.fd, now, now, () => undefined)
  }
}

type ReadResult =
  | { readonly kind: 'missing' }
  | { readonly kind: 'owner'; readonly owner: LockOwner; readonly ageMs: number }
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
  let ageMs: number
  try {
    ageMs = Date.now() - (await stat(path)).mtimeMs
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
      const owner: LockOwner = {
        pid: value.pid,
        hostname: value.hostname,
        token: value.token,
        acquiredAt: Number(value.acquiredAt),
        ...(typeof value.start === 'string' ? { start: value.start } : {}),
      }
      return { kind: 'owner', owner, ageMs }
    }
  } catch {
    // Not JSON: fall through to unreadable.
  }
  return { kind: 'unreadable', ageMs }
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

/**
 * Whether the lock's holder is dead. Another host's processes cannot be checked, so its lock is dead
 * only once its heartbeat (`ageMs`, the file's mtime) is older than the TTL. On this host: this
 * process is alive unless the lock carries another start token (a dead process that had this pid);
 * another pid is dead if it is gone, or if it now runs a process with another start token. A lock of
 * this very process is dead when no live `FileLock` here has its token (a release failed half-way).
 */
function isDead(owner: LockOwner, ageMs: number, ttlMs: number): boolean {
  if (owner.hostname !== hostname()) return ageMs > ttlMs
  if (owner.pid === process.pid) return owner.start !== ownStartToken || !heldTokens.has(owner.token)
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    if (errorCode(error) !== 'EPERM') return true
  }
  const current = owner.start === undefined ? undefined : startTokenOf(owner.pid)
  return current !== undefined && current !== owner.start
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
