/**
 * The durable append of one batch to a session file the lease holds: one write of its slices, one
 * sync, and on failure a cut back to the last durable batch so that retrying it is safe.
 */
import { type FileHandle, open } from 'node:fs/promises'
import type { SessionId } from 'dsh-llm'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import { bothFailures } from '../failures.ts'
import { storageError } from './errors.ts'
import { type AppendIo, writeAll } from './files.ts'
import { assertSameFile, assertStillOwned, type Lease } from './lease.ts'

/**
 * Writes `slices` (the lines of `count` events from `expectedSeq`) and syncs; on failure cuts the
 * file back to its last durable batch and throws `STORAGE` (or the lease's stopping error).
 */
export async function writeBatch(
  io: AppendIo,
  lease: Lease,
  sessionId: SessionId,
  file: string,
  slices: readonly Uint8Array[],
  expectedSeq: number,
  count: number,
): Promise<void> {
  if (lease.unsettled === true) await settleTail(lease, sessionId, file, expectedSeq)
  try {
    lease.handle ??= await openAppend(lease, sessionId, file)
    for (const slice of slices) {
      const wrote = writeAll(io, lease.handle, slice)
      if (wrote !== undefined) await wrote
    }
    await io.sync(lease.handle)
  } catch (error) {
    const seqs = `${expectedSeq}..${expectedSeq + count - 1}`
    const where = { sessionId, file, seq: expectedSeq }
    if (error instanceof SessionError && lease.failure === error) throw error
    // A file replaced under the writer explains the failure; its replacement must not be cut.
    assertStillOwned(lease, sessionId, file)
    try {
      await cutBack(lease)
    } catch (cutError) {
      // Some of the batch may be in the file, durable or not: unknown until a later append cuts
      // the file back to its last durable batch (it tries that first) or a load reads it.
      lease.unsettled = true
      throw new SessionError(
        SessionErrorCode.APPEND_OUTCOME_UNKNOWN,
        `session ${sessionId} (${file}): appending seqs ${seqs} failed (${String(error)}) and the file could not be cut back (${String(cutError)}); retrying the batch cuts it back first`,
        where,
        { cause: bothFailures(error, cutError, `appending seqs ${seqs} to ${file}`) },
      )
    }
    throw storageError(
      `session ${sessionId} (${file}): appending seqs ${seqs} failed: ${String(error)}`,
      where,
      error,
    )
  }
  for (const slice of slices) lease.size += slice.length
  lease.nextSeq = expectedSeq + count
}

/**
 * After an append whose outcome is unknown: cuts the file back to its last durable batch through a
 * fresh handle (checked to be the lease's file) and syncs, so the batch can be written once more.
 * Throws `APPEND_OUTCOME_UNKNOWN` (cause: the failure) while that still fails.
 */
async function settleTail(
  lease: Lease,
  sessionId: SessionId,
  file: string,
  expectedSeq: number,
): Promise<void> {
  assertStillOwned(lease, sessionId, file)
  try {
    lease.handle ??= await openAppend(lease, sessionId, file)
    await cutBack(lease)
  } catch (error) {
    if (error instanceof SessionError && lease.failure === error) throw error
    throw new SessionError(
      SessionErrorCode.APPEND_OUTCOME_UNKNOWN,
      `session ${sessionId} (${file}): an earlier append's outcome is still unknown: cutting the file back to ${lease.size} bytes failed: ${String(error)}`,
      { sessionId, file, seq: expectedSeq },
      { cause: error },
    )
  }
  lease.unsettled = false
}

/** Opens the append handle and checks it is the file the lease was taken on. */
async function openAppend(lease: Lease, sessionId: string, file: string): Promise<FileHandle> {
  const handle = await open(file, 'a')
  try {
    const found = await handle.stat()
    assertSameFile(lease, sessionId, file, { dev: found.dev, ino: found.ino })
  } catch (error) {
    await handle.close().catch(() => undefined)
    throw error
  }
  return handle
}

/**
 * After a failed write or sync: cuts the file back to its last durable size through the writer's own
 * handle (never by path, which may name another file by now) and drops the handle, so the same
 * batch can be retried without duplicating lines that may have landed.
 */
async function cutBack(lease: Lease): Promise<void> {
  const handle = lease.handle
  if (handle === undefined) return
  delete lease.handle
  try {
    await handle.truncate(lease.size)
    await handle.datasync()
  } finally {
    await handle.close().catch(() => undefined)
  }
}
