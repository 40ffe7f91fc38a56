/**
 * Listing a directory of JSONL session files: each file's header line only, read with one bounded
 * read, a few files at a time, and which of them others can read.
 */
import type { FileHandle } from 'node:fs/promises'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { SessionError, SessionErrorCode } from '../../errors.ts'
import type { ExposedSession, SessionFileHeader, SessionListing, StorageProblem } from '../../types.ts'
import { decodeHeader } from './codec.ts'
import { storageError } from './errors.ts'
import { readLines } from './lines.ts'
import { errorCode } from './lock.ts'
import { readableByOthers } from './modes.ts'
import { closeReader, openForRead, SAFE_ID } from './reading.ts'

/**
 * Bytes of the first read of a file when only its header is wanted. A header is well under 1 KB (a
 * session id is at most 200 characters); a longer first line is read on until its newline.
 */
export const HEADER_PROBE_BYTES = 4096

/**
 * Files `listSessions` reads at once. Enough to keep libuv's four file-system threads busy while
 * earlier results are decoded, few enough to stay far below any descriptor limit.
 */
export const LIST_CONCURRENCY = 16

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
  const handle = await openForRead(sessionId, file)
  try {
    const probe = Buffer.allocUnsafe(HEADER_PROBE_BYTES)
    const [read, stats] = await Promise.all([handle.read(probe, 0, HEADER_PROBE_BYTES, 0), handle.stat()])
    const newline = probe.subarray(0, read.bytesRead).indexOf(0x0a)
    let text: string | undefined
    if (newline >= 0) text = probe.toString('utf8', 0, newline)
    else if (read.bytesRead === HEADER_PROBE_BYTES) text = await longHeaderLine(handle)
    if (text === undefined) {
      throw new SessionError(SessionErrorCode.CORRUPT_LOG, `${file}:1: the header line is incomplete`, {
        sessionId,
        file,
        line: 1,
      })
    }
    return { header: decodeHeader(text, file, sessionId), mode: stats.mode & 0o777 }
  } finally {
    await closeReader(handle)
  }
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
 * files are skipped. Only each file's header line is read, `LIST_CONCURRENCY` files at a time. A
 * `.jsonl` entry that is not a readable session of its name (corrupt, unreadable, foreign, a bad file
 * name) is reported in `problems` with its path and reason, in file-name order, never thrown; so is
 * an unreadable directory. A missing directory lists as empty. With `allowedMode` (the storage's
 * file mode), the sessions whose files others can read beyond it are listed in `exposed`, oldest
 * first (the key is absent when there are none).
 */
export async function listSessions(dir: string, allowedMode?: number): Promise<SessionListing> {
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
  const worker = async () => {
    for (let i = next++; i < files.length; i = next++) {
      const name = files[i] as string
      results[i] = await headerOrProblem(join(dir, name), name.slice(0, -'.jsonl'.length))
    }
  }
  const workers: Promise<void>[] = []
  for (let w = 0; w < Math.min(LIST_CONCURRENCY, files.length); w++) workers.push(worker())
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
    const typed =
      error instanceof SessionError
        ? error
        : storageError(`cannot read ${path}`, { sessionId: id, file: path }, error)
    return { path, sessionId: id, reason: typed.message, error: typed }
  }
}
