/**
 * The lease check before each JSONL write, once the session folder is quiet: the folder's `stat`
 * alone stands for the lock's and the file's, and any takeover, rename or replacement is still
 * found by the next append (it changes the folder's mtime).
 */
import { renameSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { QUIET_AFTER_MS } from '../src/storage/jsonl/lease.ts'
import { FileLock } from '../src/storage/jsonl/lock.ts'
import { JsonlStorage } from '../src/storage/jsonl/storage.ts'
import { deadLockOwner } from './fixtures/dead-lock.ts'
import { bytesOf, header, tempDir, userEvents } from './fixtures/events.ts'

let dir: string
let dispose: () => void
const opened: JsonlStorage[] = []
beforeEach(() => {
  ;({ dir, dispose } = tempDir())
})
afterEach(async () => {
  vi.restoreAllMocks()
  for (const storage of opened.splice(0)) await storage.close().catch(() => undefined)
  dispose()
})

const id = SessionId('s1')
const file = () => join(dir, 's1.jsonl')
const lock = () => join(dir, 's1.lock')

function jsonl(): JsonlStorage {
  const storage = new JsonlStorage({ dir })
  opened.push(storage)
  return storage
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    return (error as { code: string }).code
  }
  return 'RESOLVED'
}

/** Sets the folder's mtime a minute back, at `fraction` of a second. */
function stampFolder(fraction: number): void {
  const at = Math.floor(Date.now() / 1000) - 60 + fraction
  utimesSync(dir, at, at)
}

/**
 * A writer of s1 whose folder is quiet after seqs 0..2: the mtime is stamped, seen by a full check
 * (seq 1), and seen unchanged by another one the quiet period later (seq 2).
 */
async function quietWriter(fraction = 0.5): Promise<JsonlStorage> {
  const storage = jsonl()
  await storage.create(header('s1'))
  await storage.appendBatch(id, userEvents(0, 1), 0)
  stampFolder(fraction)
  await storage.appendBatch(id, userEvents(1, 1), 1)
  await new Promise((resolve) => setTimeout(resolve, QUIET_AFTER_MS + 20))
  await storage.appendBatch(id, userEvents(2, 1), 2)
  return storage
}

describe('the lease check in a quiet folder', () => {
  it('skips the lock and file stats while the folder is quiet, and makes them again once it changes', async () => {
    const storage = await quietWriter()
    const held = vi.spyOn(FileLock.prototype, 'held')
    await storage.appendBatch(id, userEvents(3, 1), 3)
    await storage.appendBatch(id, userEvents(4, 1), 4)
    expect(held).toHaveBeenCalledTimes(0)
    writeFileSync(join(dir, 'unrelated.txt'), 'x')
    await storage.appendBatch(id, userEvents(5, 1), 5)
    expect(held).toHaveBeenCalledTimes(1)
    await storage.appendBatch(id, userEvents(6, 1), 6)
    expect(held).toHaveBeenCalledTimes(2)
  })

  it('does not trust a folder within the quiet period of its last change', async () => {
    const storage = jsonl()
    await storage.create(header('s1'))
    const held = vi.spyOn(FileLock.prototype, 'held')
    for (let seq = 0; seq < 5; seq++) await storage.appendBatch(id, userEvents(seq, 1), seq)
    expect(held).toHaveBeenCalledTimes(5)
  })

  it('waits longer before trusting a folder whose mtime is a whole second (a file system keeping seconds)', async () => {
    const storage = await quietWriter(0)
    const held = vi.spyOn(FileLock.prototype, 'held')
    await storage.appendBatch(id, userEvents(3, 1), 3)
    expect(held).toHaveBeenCalledTimes(1)
  })

  it('stops with FILE_REPLACED when the file is renamed away from a quiet folder, and writes to neither name', async () => {
    const storage = await quietWriter()
    const before = bytesOf(file())
    renameSync(file(), `${file()}.moved`)
    expect(await codeOf(storage.appendBatch(id, userEvents(3, 1), 3))).toBe('FILE_REPLACED')
    expect(bytesOf(`${file()}.moved`)).toBe(before)
    expect(() => statSync(file())).toThrow(/ENOENT/)
  })

  it('stops with FILE_REPLACED when the file is replaced in a quiet folder, and leaves the replacement alone', async () => {
    const storage = await quietWriter()
    writeFileSync(`${file()}.new`, 'another file\n')
    renameSync(`${file()}.new`, file())
    expect(await codeOf(storage.appendBatch(id, userEvents(3, 1), 3))).toBe('FILE_REPLACED')
    expect(bytesOf(file())).toBe('another file\n')
  })

  it('stops with LEASE_LOST when the lock in a quiet folder is taken over', async () => {
    const storage = await quietWriter()
    deadLockOwner(lock())
    const heir = jsonl()
    await heir.acquire(id)
    expect(await codeOf(storage.appendBatch(id, userEvents(3, 1), 3))).toBe('LEASE_LOST')
    await heir.appendBatch(id, userEvents(3, 1), 3)
  })
})
