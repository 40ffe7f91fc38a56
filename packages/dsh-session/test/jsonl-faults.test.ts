/** Issue 12's faults in the JSONL backend: file identity, torn tails on bytes, leases across processes. */
import { appendFileSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import { type AppendIo, JsonlStorage, nodeAppendIo } from 'dsh-session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bytesOf, header, tempDir, userEvent, userEvents } from './fixtures/events.ts'

let dir: string
let dispose: () => void
const opened: JsonlStorage[] = []
beforeEach(() => {
  ;({ dir, dispose } = tempDir())
})
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close().catch(() => undefined)
  dispose()
})

function jsonl(options: { io?: AppendIo; leaseTtlMs?: number } = {}): JsonlStorage {
  const storage = new JsonlStorage({ dir, ...options })
  opened.push(storage)
  return storage
}

const id = SessionId('s1')
const file = () => join(dir, 's1.jsonl')
const lock = () => join(dir, 's1.lock')

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    return (error as { code: string }).code
  }
  return 'RESOLVED'
}

/** A complete session file for s1 with `count` events, as another writer would leave it. */
function otherFile(count: number): string {
  const head = `{"format":"dsh-session","version":1,"sessionId":"s1","createdAt":1}\n`
  return (
    head +
    userEvents(0, count)
      .map((event) => `${JSON.stringify(event)}\n`)
      .join('')
  )
}

describe('2. file identity', () => {
  it('stops with FILE_REPLACED when its file is renamed away, and writes to neither name', async () => {
    const storage = jsonl()
    await storage.create(header('s1'))
    await storage.appendBatch(id, userEvents(0, 2), 0)
    const before = bytesOf(file())
    renameSync(file(), `${file()}.moved`)
    expect(await codeOf(storage.appendBatch(id, userEvents(2, 1), 2))).toBe('FILE_REPLACED')
    expect(await codeOf(storage.appendBatch(id, userEvents(2, 1), 2))).toBe('FILE_REPLACED')
    expect(bytesOf(`${file()}.moved`)).toBe(before)
    expect(() => statSync(file())).toThrow(/ENOENT/)
  })

  it('stops with FILE_REPLACED when its file is replaced under an open handle, and never cuts the replacement', async () => {
    const storage = jsonl()
    await storage.create(header('s1'))
    await storage.appendBatch(id, userEvents(0, 1), 0)
    writeFileSync(`${file()}.new`, otherFile(5))
    renameSync(`${file()}.new`, file())
    expect(await codeOf(storage.appendBatch(id, userEvents(1, 1), 1))).toBe('FILE_REPLACED')
    expect(bytesOf(file())).toBe(otherFile(5))
  })

  it('checks the identity it took with the lease before trusting its offset', async () => {
    const writer = jsonl()
    await writer.create(header('s1'))
    await writer.appendBatch(id, userEvents(0, 3), 0)
    await writer.release(id)
    const storage = jsonl()
    await storage.acquire(id)
    await storage.load(id)
    writeFileSync(`${file()}.new`, otherFile(1))
    renameSync(`${file()}.new`, file())
    expect(await codeOf(storage.appendBatch(id, userEvents(3, 1), 3))).toBe('FILE_REPLACED')
    expect(bytesOf(file())).toBe(otherFile(1))
  })

  it('names a replaced file as the reason a write failed, and leaves the replacement uncut', async () => {
    let writes = 0
    const io: AppendIo = {
      sync: nodeAppendIo.sync,
      write: async (handle, data) => {
        if (++writes === 2) {
          writeFileSync(`${file()}.new`, otherFile(1))
          renameSync(`${file()}.new`, file())
          throw Object.assign(new Error('EIO: injected'), { code: 'EIO' })
        }
        return nodeAppendIo.write(handle, data)
      },
    }
    const storage = jsonl({ io })
    await storage.create(header('s1'))
    await storage.appendBatch(id, userEvents(0, 1), 0)
    expect(await codeOf(storage.appendBatch(id, userEvents(1, 1), 1))).toBe('FILE_REPLACED')
    expect(bytesOf(file())).toBe(otherFile(1))
  })
})

describe('3. torn tail cut at the exact byte', () => {
  it('loads, repairs and appends to a file whose tail holds multi-byte and invalid UTF-8 before the tear', async () => {
    const writer = jsonl()
    await writer.create(header('s1'))
    await writer.appendBatch(id, userEvents(0, 1), 0)
    await writer.release(id)
    // A complete line whose text holds é (2 bytes), an invalid 0xff byte and a cut-short 3-byte
    // sequence: decoded, each invalid run becomes U+FFFD (3 bytes), so string lengths would lie.
    const [before, after] = JSON.stringify(userEvent(1, '@')).split('@')
    appendFileSync(
      file(),
      Buffer.concat([
        Buffer.from(`${before}é`, 'utf8'),
        Buffer.from([0xff, 0xe2, 0x82]),
        Buffer.from(`${after}\n`, 'utf8'),
      ]),
    )
    const complete = readFileSync(file())
    // The tear: half a line, then the newline of a later write (a complete line that is not JSON).
    appendFileSync(file(), `${JSON.stringify(userEvent(2)).slice(0, 30)}\n`)
    const storage = jsonl()
    await storage.acquire(id)
    const loaded = await storage.load(id)
    expect(loaded.events.map((event) => event.seq)).toEqual([0, 1])
    expect(loaded.report.truncatedTail).toEqual({ line: 4, bytes: 31 })
    expect(readFileSync(file()).equals(complete)).toBe(true)
    await storage.appendBatch(id, userEvents(2, 1), 2)
    await storage.release(id)
    const again = await jsonl().load(id)
    expect(again.events.map((event) => event.seq)).toEqual([0, 1, 2])
    expect(again.report).toEqual({ repairedEvents: 0 })
  })
})

describe('4. leases across processes', () => {
  it('records pid, host, a process start token and a lease token in the lock', async () => {
    const storage = jsonl()
    await storage.create(header('s1'))
    const owner = JSON.parse(readFileSync(lock(), 'utf8')) as Record<string, unknown>
    expect(Object.keys(owner).sort()).toEqual(['acquiredAt', 'hostname', 'pid', 'start', 'token'])
    expect(owner.pid).toBe(process.pid)
    expect(owner.hostname).toBe(hostname())
    expect(typeof owner.start).toBe('string')
  })

  it('takes over a lock left by a dead process whose pid this process now has', async () => {
    const writer = jsonl()
    await writer.create(header('s1'))
    await writer.release(id)
    writeFileSync(
      lock(),
      JSON.stringify({ pid: process.pid, hostname: hostname(), token: 'old', start: 'gone', acquiredAt: 1 }),
    )
    const storage = jsonl()
    await storage.acquire(id)
    expect(JSON.parse(readFileSync(lock(), 'utf8')).token).not.toBe('old')
  })

  it("takes over another host's lock only once its heartbeat is older than the TTL", async () => {
    const writer = jsonl()
    await writer.create(header('s1'))
    await writer.release(id)
    writeFileSync(
      lock(),
      JSON.stringify({ pid: 1, hostname: 'elsewhere', token: 'remote', start: 'x', acquiredAt: 1 }),
    )
    expect(await codeOf(jsonl({ leaseTtlMs: 60_000 }).acquire(id))).toBe('LOCKED')
    const past = new Date(Date.now() - 120_000)
    utimesSync(lock(), past, past)
    await jsonl({ leaseTtlMs: 60_000 }).acquire(id)
  })

  it('keeps its heartbeat fresh while it holds the lease', async () => {
    const storage = jsonl({ leaseTtlMs: 300 })
    await storage.create(header('s1'))
    const past = new Date(Date.now() - 10_000)
    utimesSync(lock(), past, past)
    await new Promise((resolve) => setTimeout(resolve, 250))
    expect(Date.now() - statSync(lock()).mtimeMs).toBeLessThan(300)
  })
})
