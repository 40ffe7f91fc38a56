/**
 * Listing a directory of JSONL session files: each file's header line only, read with one bounded
 * read, and which of them others can read. The reads run inline on the event loop, in time slices,
 * while the disk answers fast, else a few files at a time on libuv's pool (see `ListingReads`).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import { nextSlice, sliceSpent } from '../../time-slice.ts'
import type { ExposedSession, SessionFileHeader, SessionListing, StorageProblem } from '../../types.ts'
import { decodeHeader } from './codec.ts'
import { notFound, storageError } from './errors.ts'
import { readLines } from './lines.ts'
import { errorCode } from './lock.ts'
import { readableByOthers } from './modes.ts'
import { closeReader, openForRead, SAFE_ID } from './reading.ts'
import { AVERAGE_WEIGHT, DEFAULT_INLINE_SYNC_BUDGET_MS, type JsonlSyncMode } from './sync-policy.ts'

/**
 * Bytes of the first read of a file when only its header is wanted. A header is well under 1 KB (a
 * session id is at most 200 characters); a longer first line is read on until its newline.
 */
export const HEADER_PROBE_BYTES = 4096

/**
 * Files `listSessions` reads at once on the pool. Enough to keep libuv's four file-system threads busy
 * while earlier results are decoded, few enough to stay far below any descriptor limit.
 */
export const LIST_CONCURRENCY = 16

/**
 * How a listing reads the headers, the storage's `sync` mode (`JsonlSyncMode`) read for the listing:
 * - `auto`: inline — `openSync`, one `readSync`, `fstatSync`, `closeSync` per file on the event loop,
 *   yielding whenever the process-wide time slice is spent (`sliceSpent`) — while the moving average
 *   of those reads' times (weight 1/5 for the newest, from 0) stays within `budgetMs`; once it does
 *   not (one read of 5× the budget is enough), the rest of that listing goes to the pool. A header
 *   costs four system calls inline against four thread-pool round trips (each two cross-thread
 *   wake-ups): on a 2-core VM, 10,000 headers took 0.18 s inline and 0.72–0.81 s on the pool.
 * - `inline`: inline throughout, whatever a read takes.
 * - `thread-pool`: every read on libuv's pool, `LIST_CONCURRENCY` files at a time: the event loop
 *   never waits for the disk (a network file system, a disk that can stall).
 */
export interface ListingReads {
  readonly mode: JsonlSyncMode
  /** `auto`: once the average inline read (open to close, ms) is over this, the rest goes to the pool. */
  readonly budgetMs: number
}

const DEFAULT_READS: ListingReads = { mode: 'auto', budgetMs: DEFAULT_INLINE_SYNC_BUDGET_MS }

/** One file's header and permission bits. */
interface HeaderRead {
  readonly header: SessionFileHeader
  readonly mode: number
}

/**
 * Reads and checks only the header line of `file` (session `sessionId`), with its permission bits.
 * Throws like `decodeHeader`, `CORRUPT_LOG` (line 1) if the header line is incomplete, `NOT_FOUND`
 * if the file is missing, `STORAGE` if it cannot be read.
 */
export async function readHeader(sessionId: string, file: string): Promise<HeaderRead> {
  const handle = await openForRead(sessionId, file, HEADER_OPEN_FLAGS)
  try {
    // The kind first: a named pipe's read fails (no writer, non-blocking) and a device's never ends.
    const stats = await handle.stat()
    if (!stats.isFile()) throw notRegularFile(sessionId, file)
    const probe = Buffer.allocUnsafe(HEADER_PROBE_BYTES)
    const read = await handle.read(probe, 0, HEADER_PROBE_BYTES, 0)
    const newline = probe.subarray(0, read.bytesRead).indexOf(0x0a)
    let text: string | undefined
    if (newline >= 0) text = probe.toString('utf8', 0, newline)
    else if (read.bytesRead === HEADER_PROBE_BYTES) text = await longHeaderLine(handle)
    if (text === undefined) throw incompleteHeader(sessionId, file)
    return { header: decodeHeader(text, file, sessionId), mode: stats.mode & 0o777 }
  } finally {
    await closeReader(handle)
  }
}

/**
 * How a listing opens a `.jsonl` entry: read-only and non-blocking, so that a named pipe (whose open
 * would wait for a writer) opens at once and is then reported, like a device, as not a regular file.
 * The flag changes nothing for a regular file.
 */
const HEADER_OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK

function notRegularFile(sessionId: string, file: string): SessionError {
  return new SessionError(SessionErrorCode.STORAGE, `${file} is not a regular file; a session file is one`, {
    sessionId,
    file,
  })
}

function incompleteHeader(sessionId: string, file: string): SessionError {
  return new SessionError(SessionErrorCode.CORRUPT_LOG, `${file}:1: the header line is incomplete`, {
    sessionId,
    file,
    line: 1,
  })
}

/** The first read of an inline header read; one per process, as inline reads never overlap. */
const inlineProbe = Buffer.allocUnsafeSlow(HEADER_PROBE_BYTES)
/** How long the last inline read took from open to close, ms (the disk's share: not the decoding). */
let lastInlineReadMs = 0

/**
 * `readHeader` with synchronous calls, on the event loop: the same result and errors, or `undefined`
 * when the header line is longer than the first read (the caller reads that file with `readHeader`).
 * Sets `lastInlineReadMs`.
 */
function readHeaderInline(sessionId: string, file: string): HeaderRead | undefined {
  const started = performance.now()
  let fd: number
  try {
    fd = openSync(file, HEADER_OPEN_FLAGS)
  } catch (error) {
    lastInlineReadMs = performance.now() - started
    if (errorCode(error) === 'ENOENT') throw notFound(sessionId, file)
    throw storageError(`cannot open ${file}`, { sessionId, file }, error)
  }
  let bytesRead: number
  let mode: number
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) throw notRegularFile(sessionId, file)
    mode = stats.mode & 0o777
    bytesRead = readSync(fd, inlineProbe, 0, HEADER_PROBE_BYTES, 0)
  } finally {
    // A read-only descriptor: a failing close loses nothing (see `closeReader`).
    try {
      closeSync(fd)
    } catch {}
    lastInlineReadMs = performance.now() - started
  }
  const newline = inlineProbe.subarray(0, bytesRead).indexOf(0x0a)
  if (newline >= 0) {
    return { header: decodeHeader(inlineProbe.toString('utf8', 0, newline), file, sessionId), mode }
  }
  if (bytesRead === HEADER_PROBE_BYTES) return undefined
  throw incompleteHeader(sessionId, file)
}

/** The first line of a file whose first `HEADER_PROBE_BYTES` hold no newline, or undefined if it has none. */
async function longHeaderLine(handle: FileHandle): Promise<string | undefined> {
  for await (const lines of readLines(handle)) {
    const first = lines[0]
    if (first !== undefined) return first.terminated ? first.text : undefined
  }
  return undefined
}

/**
 * The headers of every `*.jsonl` session file in `dir`, oldest first (then by id); lock and temp
 * files are skipped. Only each file's header line is read: inline or on the pool, as `reads` says
 * (`ListingReads`; by default `auto`). A `.jsonl` entry that is not a readable session of its name
 * (corrupt, unreadable, foreign, a bad file name) is reported in `problems` with its path and reason,
 * in file-name order, never thrown; so is an unreadable directory. A missing directory lists as
 * empty. With `allowedMode` (the storage's file mode), the sessions whose files others can read
 * beyond it are listed in `exposed`, oldest first (the key is absent when there are none).
 */
export async function listSessions(
  dir: string,
  allowedMode?: number,
  reads: ListingReads = DEFAULT_READS,
): Promise<SessionListing> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { sessions: [], problems: [] }
    return { sessions: [], problems: [{ path: dir, reason: `cannot list the directory: ${String(error)}` }] }
  }
  const files = names.filter((name) => name.endsWith('.jsonl')).sort()
  const results: (HeaderRead | StorageProblem)[] = new Array(files.length)
  let next = 0
  if (reads.mode !== 'thread-pool') {
    let averageMs = 0
    for (; next < files.length; next++) {
      if (sliceSpent()) await nextSlice()
      const name = files[next] as string
      const path = join(dir, name)
      const id = name.slice(0, -'.jsonl'.length)
      const read = headerOrProblemInline(path, id)
      results[next] = read ?? (await headerOrProblem(path, id))
      if (reads.mode !== 'auto' || read === undefined) continue
      averageMs += AVERAGE_WEIGHT * (lastInlineReadMs - averageMs)
      if (averageMs > reads.budgetMs) {
        next++
        break
      }
    }
  }
  const worker = async () => {
    for (let i = next++; i < files.length; i = next++) {
      const name = files[i] as string
      results[i] = await headerOrProblem(join(dir, name), name.slice(0, -'.jsonl'.length))
    }
  }
  const workers: Promise<void>[] = []
  for (let w = 0; w < Math.min(LIST_CONCURRENCY, files.length - next); w++) workers.push(worker())
  await Promise.all(workers)
  const read: HeaderRead[] = []
  const problems: StorageProblem[] = []
  for (const result of results) {
    if ('header' in result) read.push(result)
    else problems.push(result)
  }
  read.sort(
    (a, b) => a.header.createdAt - b.header.createdAt || (a.header.sessionId < b.header.sessionId ? -1 : 1),
  )
  const sessions = read.map((entry) => entry.header)
  if (allowedMode === undefined) return { sessions, problems }
  const exposed: ExposedSession[] = []
  for (const { header, mode } of read) {
    if (readableByOthers(mode, allowedMode)) {
      exposed.push(
        Object.freeze({ path: join(dir, `${header.sessionId}.jsonl`), sessionId: header.sessionId, mode }),
      )
    }
  }
  return exposed.length === 0 ? { sessions, problems } : { sessions, problems, exposed }
}

async function headerOrProblem(path: string, id: string): Promise<HeaderRead | StorageProblem> {
  if (!SAFE_ID.test(id)) return { path, reason: 'the file name is not a usable session id' }
  try {
    return await readHeader(id, path)
  } catch (error) {
    return problemOf(path, id, error)
  }
}

/** `headerOrProblem` read inline; `undefined` for a header line longer than the first read. */
function headerOrProblemInline(path: string, id: string): HeaderRead | StorageProblem | undefined {
  if (!SAFE_ID.test(id)) return { path, reason: 'the file name is not a usable session id' }
  try {
    return readHeaderInline(id, path)
  } catch (error) {
    return problemOf(path, id, error)
  }
}

function problemOf(path: string, id: string, error: unknown): StorageProblem {
  const typed =
    error instanceof SessionError
      ? error
      : storageError(`cannot read ${path}`, { sessionId: id, file: path }, error)
  return { path, sessionId: id, reason: typed.message, error: typed }
}
