/**
 * The read side of the JSONL backend: opening session files for reading and scanning a whole file.
 * Never writes.
 */
import { type FileHandle, open } from 'node:fs/promises'
import { SessionError } from '../../errors.ts'
import type { SessionEvent } from '../../types.ts'
import { notFound, storageError } from './errors.ts'
import { errorCode } from './lock.ts'
import { type ScanState, scanSession } from './scan.ts'

/** Session ids usable as file names. */
export const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/

/** Opens `file` for reading. Throws `NOT_FOUND` if it is missing, `STORAGE` for other failures. */
export async function openForRead(
  sessionId: string,
  file: string,
  flags: string | number = 'r',
): Promise<FileHandle> {
  try {
    return await open(file, flags)
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
