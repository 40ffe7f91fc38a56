/**
 * File-system steps of the JSONL backend that must be durable: the append path (one write, one sync),
 * atomic exclusive creation of a new file, and syncing a directory entry.
 */
import { randomBytes } from 'node:crypto'
import { writeSync } from 'node:fs'
import { type FileHandle, link, open, unlink } from 'node:fs/promises'
import { errorCode } from './lock.ts'
import { DEFAULT_FILE_MODE } from './modes.ts'
import { type AdaptiveSyncOptions, type JsonlSyncMode, nodeSyncCalls, SyncPolicy } from './sync-policy.ts'

/**
 * The two calls of the durable append path. Injectable so tests can count or fail them; the default
 * (`nodeAppendIo`) is what production uses.
 */
export interface AppendIo {
  /**
   * Writes `data` at the end of the append-mode `handle`; returns (or resolves with) the bytes
   * written. A synchronous result saves the append path a promise hop.
   */
  write(handle: FileHandle, data: Uint8Array): number | Promise<number>
  /** Makes everything written to `handle` durable (fdatasync). */
  sync(handle: FileHandle): Promise<void>
}

/**
 * Node's calls with a sync policy of `mode` (see `JsonlSyncMode`): the write is a `writeSync` on the
 * handle's descriptor (appending a batch to a regular file only copies it into the page cache,
 * microseconds for a batch, cheaper inline than a thread-pool round trip); the sync is
 * `fdatasyncSync` or the callback `fs.fdatasync` on the same descriptor, as the policy decides (the
 * callback form skips the `FileHandle` promise wrapper: about 10% less CPU per durable step).
 */
export function nodeAppendIoWith(mode: JsonlSyncMode, options?: AdaptiveSyncOptions): AppendIo {
  const policy = new SyncPolicy(mode, nodeSyncCalls, options)
  return {
    write: (handle, data) => writeSync(handle.fd, data),
    sync: (handle) => policy.sync(handle.fd),
  }
}

/** Node's calls with the `auto` sync policy: what a `JsonlStorage` given no `io` uses (each its own). */
export const nodeAppendIo: AppendIo = nodeAppendIoWith('auto')

/**
 * Writes all of `data` with `io.write` (one call unless the OS writes short), then one `io.sync`.
 */
export async function writeDurably(io: AppendIo, handle: FileHandle, data: Uint8Array): Promise<void> {
  await writeAll(io, handle, data)
  await io.sync(handle)
}

/**
 * Writes all of `data` with `io.write`, one call unless the OS writes short. Synchronous (returns
 * `undefined`) while `io.write` is; returns a promise once a write returns one.
 */
export function writeAll(io: AppendIo, handle: FileHandle, data: Uint8Array, from = 0): void | Promise<void> {
  let done = from
  while (done < data.length) {
    const result = io.write(handle, done === 0 ? data : data.subarray(done))
    if (typeof result !== 'number') {
      const at = done
      return result.then((written) => {
        if (written <= 0) throw new Error(`write made no progress after ${at} of ${data.length} bytes`)
        return writeAll(io, handle, data, at + written)
      })
    }
    if (result <= 0) throw new Error(`write made no progress after ${done} of ${data.length} bytes`)
    done += result
  }
}

/**
 * Makes `path` appear with exactly `data` and permission `mode`, or not at all: writes a temp file
 * beside it (created with `mode`, so it is never readable by others even for a moment), syncs it,
 * links it into place (failing if `path` exists) and syncs the directory. Returns false if `path`
 * existed. A crash before the link leaves only the temp file (`<name>.<random>.tmp`).
 */
export async function createFileAtomically(
  dir: string,
  path: string,
  data: Uint8Array,
  mode = DEFAULT_FILE_MODE,
): Promise<boolean> {
  const temp = `${path}.${randomBytes(8).toString('hex')}.tmp`
  const handle = await open(temp, 'wx', mode)
  try {
    // Exactly `mode`, whatever the umask: a widened mode is what the app asked for.
    await handle.chmod(mode)
    await writeDurably(nodeAppendIo, handle, data)
  } finally {
    await handle.close()
  }
  try {
    await link(temp, path)
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false
    throw error
  } finally {
    await unlink(temp).catch(() => undefined)
  }
  await syncDirectory(dir)
  return true
}

/** Makes the directory's entries (a created, renamed or removed file) durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Cuts `file` to `offset` bytes and syncs it. `check` sees the identity of the file actually opened
 * first and throws to leave it untouched (a file replaced since it was read).
 */
export async function truncateAt(
  file: string,
  offset: number,
  check: (found: { dev: number; ino: number }) => void = () => undefined,
): Promise<void> {
  const handle = await open(file, 'r+')
  try {
    const { dev, ino } = await handle.stat()
    check({ dev, ino })
    await handle.truncate(offset)
    await handle.datasync()
  } finally {
    await handle.close()
  }
}
