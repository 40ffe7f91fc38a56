/**
 * The read side of the JSONL backend: opening session files for reading, scanning a whole file,
 * reading just its header, and listing a directory of them. Never writes.
 */
import { type FileHandle, open, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import type { SessionEvent, SessionFileHeader, SessionListing, StorageProblem } from '../../types.ts'
import { decodeHeader } from './codec.ts'
import { notFound, storageError } from './errors.ts'
import { readLines } from './lines.ts'
import { errorCode } from './lock.ts'
import { type ScanState, scanSession } from './scan.ts'

/** Session ids usable as file names. */
export const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/

/** Opens `file` for reading. Throws `NOT_FOUND` if it is missing, `STORAGE` for other failures. */
export async function openForRead(sessionId: string, file: string): Promise<FileHandle> {
  try {
    return await open(file, 'r')
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw notFound(sessionId, file)
    throw storageError(`cannot open ${file}`, { sessionId, file }, error)
  }
}

/**
 * Closes a read-only handle. Its reads are complete by then, so a failing close loses nothing and is
 * not worth failing the read over; the descriptor is gone either way.
 */
export async function closeReader(handle: FileHandle): Promise<void> {
  await handle.close().catch(() => undefined)
}

/** Scans the whole of `file` (see `scanSession`), handing each chunk's events to `onEvents`. */
export async function scanFile(
  sessionId: string,
  file: string,
  onEvents: (events: SessionEvent[]) => void,
): Promise<ScanState> {
  const handle = await openForRead(sessionId, file)
  const state: ScanState = { nextSeq: 0, end: 0 }
  try {
    for await (const batch of scanSession(handle, file, sessionId, state)) onEvents(batch)
  } catch (error) {
    if (error instanceof SessionError) throw error
    throw storageError(`cannot read ${file}`, { sessionId, file }, error)
  } finally {
    await closeReader(handle)
  }
  return state
}

/** Reads and checks only the header line of `file`. Throws like `decodeHeader`, or `CORRUPT_LOG` if it is incomplete. */
export async function readHeader(sessionId: string, file: string): Promise<SessionFileHeader> {
  const handle = await openForRead(sessionId, file)
  try {
    for await (const lines of readLines(handle, 4096)) {
      const first = lines[0]
      if (first === undefined) continue
      if (first.terminated) return decodeHeader(first.text, file, sessionId)
      break
    }
  } finally {
    await closeReader(handle)
  }
  throw new SessionError(SessionErrorCode.CORRUPT_LOG, `${file}:1: the header line is incomplete`, {
    sessionId,
    file,
    line: 1,
  })
}

/**
 * The headers of every `*.jsonl` session file in `dir`, oldest first; lock and temp files are
 * skipped. A `.jsonl` entry that is not a readable session of its name (corrupt, unreadable, foreign,
 * a bad file name) is reported in `problems` with its path and reason, never thrown; so is an
 * unreadable directory. A missing directory lists as empty.
 */
export async function listSessions(dir: string): Promise<SessionListing> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { sessions: [], problems: [] }
    return { sessions: [], problems: [{ path: dir, reason: `cannot list the directory: ${String(error)}` }] }
  }
  const sessions: SessionFileHeader[] = []
  const problems: StorageProblem[] = []
  for (const name of names.sort()) {
    if (!name.endsWith('.jsonl')) continue
    const path = join(dir, name)
    const id = name.slice(0, -'.jsonl'.length)
    if (!SAFE_ID.test(id)) {
      problems.push({ path, reason: 'the file name is not a usable session id' })
      continue
    }
    try {
      sessions.push(await readHeader(id, path))
    } catch (error) {
      const typed =
        error instanceof SessionError
          ? error
          : storageError(`cannot read ${path}`, { sessionId: id, file: path }, error)
      problems.push({ path, sessionId: id, reason: typed.message, error: typed })
    }
  }
  sessions.sort((a, b) => a.createdAt - b.createdAt || (a.sessionId < b.sessionId ? -1 : 1))
  return { sessions, problems }
}
