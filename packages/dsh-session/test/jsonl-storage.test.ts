import { appendFileSync, chmodSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import { type AppendIo, JsonlStorage, type SessionEvent } from 'dsh-session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bytesOf, header, tempDir, userEvent, userEvents } from './fixtures/events.ts'

let dir: string
let dispose: () => void
const opened: JsonlStorage[] = []
beforeEach(() => {
  ;({ dir, dispose } = tempDir())
})
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close()
  dispose()
})

/** A storage over the test's directory, closed after the test. */
function jsonl(io?: AppendIo): JsonlStorage {
  const storage = new JsonlStorage(io === undefined ? { dir } : { dir, io })
  opened.push(storage)
  return storage
}

const id = SessionId('s1')

async function errorOf(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; where: unknown }> {
  try {
    await promise
  } catch (error) {
    const { code, message, where } = error as { code: string; message: string; where: unknown }
    return { code, message, where }
  }
  throw new Error('expected a rejection')
}

function lines(events: readonly SessionEvent[]): string {
  return events.map((event) => `${JSON.stringify(event)}\n`).join('')
}

/** A version 1 header (files written before run lines), which this reader still loads. */
const headerLine = `{"format":"dsh-session","version":1,"sessionId":"s1","createdAt":1700000000000}\n`
/** The header this version writes. */
const headerLineNow = headerLine.replace('"version":1', '"version":2')

describe('JsonlStorage round trip', () => {
  it('writes a header line then one event per line, and loads them back unchanged', async () => {
    const storage = jsonl()
    const file = join(dir, 's1.jsonl')
    await storage.create(header('s1'))
    expect(bytesOf(file)).toBe(headerLineNow)
    const long = 'ü'.repeat(70_000) // spans two read chunks, multi-byte characters across the boundary
    const events = [...userEvents(0, 3), userEvent(3, long), ...userEvents(4, 2)]
    await storage.appendBatch(id, events.slice(0, 3), 0)
    await storage.appendBatch(id, events.slice(3), 3)
    expect(bytesOf(file)).toBe(headerLineNow + lines(events))
    await storage.release(id)

    const reader = jsonl()
    const loaded = await reader.load(id)
    expect(loaded.header).toEqual(header('s1'))
    expect(loaded.events).toEqual(events)
    expect(loaded.report).toEqual({ repairedEvents: 0 })
    const tail: number[] = []
    for await (const event of reader.read(id, 3)) tail.push(event.seq)
    expect(tail).toEqual([3, 4, 5])
    expect(await reader.list()).toEqual({ sessions: [header('s1')], problems: [] })
  })

  it('keeps a fork parent in the header', async () => {
    const storage = jsonl()
    const child = { ...header('child'), parent: { sessionId: SessionId('s1'), seedLength: 4 } }
    await storage.create(child)
    expect((await storage.load(SessionId('child'))).header).toEqual(child)
  })

  it('lists every session oldest first and skips temp and lock files', async () => {
    const storage = jsonl()
    await storage.create(header('b', 2))
    await storage.create(header('a', 3))
    await storage.create(header('c', 1))
    writeFileSync(join(dir, 'd.jsonl.0123abcd.tmp'), '{"format":"dsh-se')
    expect((await storage.list()).sessions.map((h) => h.sessionId)).toEqual(['c', 'b', 'a'])
    expect(await new JsonlStorage({ dir: join(dir, 'missing') }).list()).toEqual({
      sessions: [],
      problems: [],
    })
  })
})

describe('JsonlStorage list', () => {
  it('reads only each header line, many files at once, and keeps the order, problems and exposure of one file at a time', async () => {
    // More files than are read at once; equal creation times order by id; bodies are never read.
    const ids = Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, '0')}`)
    for (const [i, name] of ids.entries()) {
      writeFileSync(
        join(dir, `${name}.jsonl`),
        `${JSON.stringify(header(name, 1000 + (i % 4)))}\nnot json\n{"type":`,
        {
          mode: 0o600,
        },
      )
    }
    // A header line longer than the first read: a fork of a session with a long (foreign) id.
    const parent = { sessionId: SessionId('p'.repeat(5000)), seedLength: 3 }
    const long = { ...header('long', 999), parent }
    writeFileSync(join(dir, 'long.jsonl'), `${JSON.stringify(long)}\n`, { mode: 0o600 })
    writeFileSync(join(dir, 'torn.jsonl'), '{"format":"dsh-session","version":1', { mode: 0o600 })
    writeFileSync(join(dir, 'endless.jsonl'), 'x'.repeat(9000), { mode: 0o600 })
    writeFileSync(join(dir, 'other.jsonl'), headerLine, { mode: 0o600 })
    chmodSync(join(dir, 's07.jsonl'), 0o644)
    chmodSync(join(dir, 's02.jsonl'), 0o640)
    const listing = await jsonl().list()
    const byTime = [0, 1, 2, 3].flatMap((r) => ids.filter((_, i) => i % 4 === r))
    expect(listing.sessions).toEqual([
      long,
      ...byTime.map((name, k) => header(name, 1000 + Math.floor(k / 10))),
    ])
    expect(listing.problems.map(({ path, sessionId, reason }) => ({ path, sessionId, reason }))).toEqual([
      {
        path: join(dir, 'endless.jsonl'),
        sessionId: 'endless',
        reason: `${join(dir, 'endless.jsonl')}:1: the header line is incomplete`,
      },
      {
        path: join(dir, 'other.jsonl'),
        sessionId: 'other',
        reason: `${join(dir, 'other.jsonl')}:1: header names session "s1", expected "other"`,
      },
      {
        path: join(dir, 'torn.jsonl'),
        sessionId: 'torn',
        reason: `${join(dir, 'torn.jsonl')}:1: the header line is incomplete`,
      },
    ])
    expect(listing.exposed).toEqual([
      { path: join(dir, 's02.jsonl'), sessionId: 's02', mode: 0o640 },
      { path: join(dir, 's07.jsonl'), sessionId: 's07', mode: 0o644 },
    ])
  })
})

describe('JsonlStorage create', () => {
  it('leaves only the session file and its lock, and an interrupted create leaves only an ignored temp file', async () => {
    const storage = jsonl()
    // What a create interrupted before its link leaves behind: a temp file with half a header.
    writeFileSync(join(dir, 's1.jsonl.5e5e5e5e5e5e5e5e.tmp'), '{"format":"dsh-session","ver')
    expect(await storage.list()).toEqual({ sessions: [], problems: [] })
    await storage.create(header('s1'))
    expect(readdirSync(dir).sort()).toEqual(['s1.jsonl', 's1.jsonl.5e5e5e5e5e5e5e5e.tmp', 's1.lock'])
    expect(await storage.list()).toEqual({ sessions: [header('s1')], problems: [] })
  })

  it('refuses an existing id with ALREADY_EXISTS and leaves the file as it was', async () => {
    const first = jsonl()
    await first.create(header('s1'))
    await first.appendBatch(id, userEvents(0, 2), 0)
    await first.release(id)
    const before = bytesOf(join(dir, 's1.jsonl'))
    const error = await errorOf(jsonl().create(header('s1', 5)))
    expect(error.code).toBe('ALREADY_EXISTS')
    expect(error.message).toBe(`session s1 already exists (${join(dir, 's1.jsonl')})`)
    expect(bytesOf(join(dir, 's1.jsonl'))).toBe(before)
  })

  it('refuses an id that is not a safe file name', async () => {
    const error = await errorOf(jsonl().create(header('../escape')))
    expect(error.code).toBe('STORAGE')
    expect(error.message).toBe(
      `session id "../escape" is not usable as a file name (letters, digits, '.', '_', '-')`,
    )
  })
})

describe('JsonlStorage lease', () => {
  it('refuses a second writer instance in the same process before it writes a byte', async () => {
    const owner = jsonl()
    await owner.create(header('s1'))
    await owner.appendBatch(id, userEvents(0, 2), 0)
    const file = join(dir, 's1.jsonl')
    const before = bytesOf(file)
    const intruder = jsonl()
    const error = await errorOf(intruder.acquire(id))
    expect(error.code).toBe('LOCKED')
    expect(error.message).toMatch(
      new RegExp(
        `^session s1 \\(${escapeRegExp(file)}\\) is locked by pid ${process.pid} on .+; lock file ${escapeRegExp(join(dir, 's1.lock'))}$`,
      ),
    )
    const append = await errorOf(intruder.appendBatch(id, userEvents(2, 1), 2))
    expect(append.code).toBe('LOCKED')
    expect(append.message).toBe(
      `session s1 (${file}): this storage does not hold its write lease; create or acquire it first`,
    )
    expect(bytesOf(file)).toBe(before)

    await owner.release(id)
    await intruder.acquire(id)
    await intruder.appendBatch(id, userEvents(2, 1), 2)
    expect((await intruder.load(id)).events).toEqual(userEvents(0, 3))
  })

  it('takes over a lock whose holder on this host is dead', async () => {
    const storage = jsonl()
    await storage.create(header('s1'))
    await storage.release(id)
    const lockFile = join(dir, 's1.lock')
    const deadPid = 2 ** 22 + 12_345 // above Linux's pid_max: never a live process
    const { hostname } = await import('node:os')
    writeFileSync(
      lockFile,
      JSON.stringify({ pid: deadPid, hostname: hostname(), token: 'old', acquiredAt: 1 }),
    )
    await storage.acquire(id)
    expect(JSON.parse(bytesOf(lockFile))).toMatchObject({ pid: process.pid, hostname: hostname() })
    await storage.appendBatch(id, userEvents(0, 1), 0)
    await storage.release(id)
    expect(readdirSync(dir)).toEqual(['s1.jsonl'])
  })

  it('treats a holder on another host as live', async () => {
    const storage = jsonl()
    await storage.create(header('s1'))
    await storage.release(id)
    writeFileSync(
      join(dir, 's1.lock'),
      JSON.stringify({ pid: 1, hostname: 'elsewhere', token: 't', acquiredAt: 1 }),
    )
    const error = await errorOf(storage.acquire(id))
    expect(error.code).toBe('LOCKED')
    expect(error.message).toBe(
      `session s1 (${join(dir, 's1.jsonl')}) is locked by pid 1 on elsewhere; lock file ${join(dir, 's1.lock')}`,
    )
  })

  it('leaves a lock file that is no longer its own in place on release', async () => {
    const storage = jsonl()
    await storage.create(header('s1'))
    const foreign = JSON.stringify({ pid: 1, hostname: 'elsewhere', token: 't', acquiredAt: 1 })
    writeFileSync(join(dir, 's1.lock'), foreign)
    await storage.release(id)
    expect(bytesOf(join(dir, 's1.lock'))).toBe(foreign)
  })

  it('reports NOT_FOUND for a session that does not exist', async () => {
    const storage = jsonl()
    const file = join(dir, 'nope.jsonl')
    // Started one at a time: a second rejection pending while the first is awaited would be unhandled.
    for (const attempt of [() => storage.acquire(SessionId('nope')), () => storage.load(SessionId('nope'))]) {
      const error = await errorOf(attempt())
      expect(error.code).toBe('NOT_FOUND')
      expect(error.message).toBe(`session nope not found (${file})`)
    }
  })
})

describe('JsonlStorage appendBatch', () => {
  it('refuses a batch at the wrong seq or with a gap inside, writing nothing', async () => {
    const storage = jsonl()
    const file = join(dir, 's1.jsonl')
    await storage.create(header('s1'))
    await storage.appendBatch(id, userEvents(0, 2), 0)
    const before = bytesOf(file)
    const late = await errorOf(storage.appendBatch(id, userEvents(5, 1), 5))
    expect(late).toEqual({
      code: 'SEQ_MISMATCH',
      message: `session s1 (${file}): expected seq 2, got a batch at seq 5`,
      where: { sessionId: 's1', file, seq: 2 },
    })
    const gap = await errorOf(storage.appendBatch(id, [userEvent(2), userEvent(4)], 2))
    expect(gap.code).toBe('SEQ_MISMATCH')
    expect(gap.message).toBe('session s1: batch event 1 (user/message) has seq 4, expected 3')
    expect(bytesOf(file)).toBe(before)
    await storage.appendBatch(id, userEvents(2, 1), 2)
  })

  it('learns the next seq from the file after acquire', async () => {
    const first = jsonl()
    await first.create(header('s1'))
    await first.appendBatch(id, userEvents(0, 3), 0)
    await first.release(id)
    const second = jsonl()
    await second.acquire(id)
    const error = await errorOf(second.appendBatch(id, [userEvent(0, 'not what is stored')], 0))
    expect(error.message).toBe(
      `session s1 (${join(dir, 's1.jsonl')}): expected seq 3, got a batch at seq 0 whose events differ from the stored ones`,
    )
    // The same batch again (an earlier attempt that did land) is settled, not written twice.
    await second.appendBatch(id, userEvents(0, 3), 0)
    await second.appendBatch(id, userEvents(1, 3), 1)
    await second.appendBatch(id, userEvents(3, 1), 3)
    expect((await second.load(id)).events).toEqual(userEvents(0, 4))
  })

  it('makes one write and one sync per batch and resolves only after the sync', async () => {
    const calls: string[] = []
    let releaseSync: () => void = () => undefined
    let holdSync = false
    const storage = jsonl({
      write: async (handle, data) => {
        calls.push(`write ${data.toString().split('\n').length - 1}`)
        return (await handle.write(data)).bytesWritten
      },
      sync: async (handle) => {
        calls.push('sync')
        if (holdSync) await new Promise<void>((resolve) => (releaseSync = resolve))
        await handle.datasync()
      },
    })
    await storage.create(header('s1'))
    await storage.appendBatch(id, userEvents(0, 10), 0)
    await storage.appendBatch(id, userEvents(10, 1), 10)
    await storage.appendBatch(id, userEvents(11, 50), 11)
    expect(calls).toEqual(['write 10', 'sync', 'write 1', 'sync', 'write 50', 'sync'])

    holdSync = true
    let resolved = false
    const pending = storage.appendBatch(id, userEvents(61, 2), 61).then(() => (resolved = true))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(calls.slice(6)).toEqual(['write 2', 'sync'])
    expect(resolved).toBe(false)
    releaseSync()
    await pending
    expect(resolved).toBe(true)
  })

  it('cuts a batch whose sync failed back off the file, so retrying it writes no duplicates', async () => {
    let failSync = 0
    const storage = jsonl({
      write: async (handle, data) => (await handle.write(data)).bytesWritten,
      sync: async (handle) => {
        if (failSync-- > 0) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
        await handle.datasync()
      },
    })
    const file = join(dir, 's1.jsonl')
    await storage.create(header('s1'))
    await storage.appendBatch(id, userEvents(0, 1), 0)
    const durable = bytesOf(file)
    failSync = 1
    const failed = await errorOf(storage.appendBatch(id, userEvents(1, 2), 1))
    expect(failed).toEqual({
      code: 'STORAGE',
      message: `session s1 (${file}): appending seqs 1..2 failed: Error: EIO: i/o error, fdatasync`,
      where: { sessionId: 's1', file, seq: 1 },
    })
    expect(bytesOf(file)).toBe(durable)
    await storage.appendBatch(id, userEvents(1, 2), 1)
    expect(bytesOf(file)).toBe(durable + lines(userEvents(1, 2)))
    expect((await storage.load(id)).events).toEqual(userEvents(0, 3))
  })

  it('keeps the EIO and the failed cut-back both in the cause chain, reports the outcome unknown, and settles on retry (issue 31 items 1 and 3)', async () => {
    let failSync = 1
    const storage = jsonl({
      write: async (handle, data) => (await handle.write(data)).bytesWritten,
      sync: async (handle) => {
        if (failSync === 0) return handle.datasync()
        failSync--
        // The writer's handle is gone: the cut-back (a truncate through it) now fails too.
        await handle.close()
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
      },
    })
    const file = join(dir, 's1.jsonl')
    await storage.create(header('s1'))
    let failed: unknown
    await storage.appendBatch(id, userEvents(0, 2), 0).catch((error: unknown) => {
      failed = error
    })
    expect(failed).toMatchObject({
      code: 'APPEND_OUTCOME_UNKNOWN',
      where: { sessionId: 's1', file, seq: 0 },
      message: expect.stringMatching(
        /^session s1 \(.*s1\.jsonl\): appending seqs 0\.\.1 failed \(Error: EIO: i\/o error, fdatasync\) and the file could not be cut back \(.+\); retrying the batch cuts it back first$/,
      ),
    })
    const cause = (failed as Error).cause
    expect(cause).toBeInstanceOf(AggregateError)
    const [first, second] = (cause as AggregateError).errors as Error[]
    expect(first).toMatchObject({ code: 'EIO', message: 'EIO: i/o error, fdatasync' })
    expect(second).toBeInstanceOf(Error)
    expect(second).not.toBe(first)
    // The retry cuts the landed lines back, writes the batch once, and the session goes on.
    await storage.appendBatch(id, userEvents(0, 2), 0)
    await storage.appendBatch(id, userEvents(2, 1), 2)
    expect((await storage.load(id)).events).toEqual(userEvents(0, 3))
    await storage.release(id)
    expect((await jsonl().load(id)).events).toEqual(userEvents(0, 3))
  })
})

describe('JsonlStorage load rules', () => {
  async function stored(count: number): Promise<{ storage: JsonlStorage; file: string; text: string }> {
    const storage = jsonl()
    await storage.create(header('s1'))
    await storage.appendBatch(id, userEvents(0, count), 0)
    await storage.release(id)
    const file = join(dir, 's1.jsonl')
    return { storage, file, text: bytesOf(file) }
  }

  it('truncates a torn final line without a newline and reports it', async () => {
    const { storage, file, text } = await stored(3)
    const torn = JSON.stringify(userEvent(3)).slice(0, 40)
    appendFileSync(file, torn)
    const loaded = await storage.load(id)
    expect(loaded.events).toEqual(userEvents(0, 3))
    expect(loaded.report).toEqual({ truncatedTail: { line: 5, bytes: 40 }, repairedEvents: 0 })
    expect(bytesOf(file)).toBe(text)
    expect(readdirSync(dir)).toEqual(['s1.jsonl'])
  })

  it('truncates a complete final line that lacks its newline (its batch was never acknowledged)', async () => {
    const { storage, file, text } = await stored(2)
    const line = JSON.stringify(userEvent(2))
    appendFileSync(file, line)
    const loaded = await storage.load(id)
    expect(loaded.events).toEqual(userEvents(0, 2))
    expect(loaded.report).toEqual({
      truncatedTail: { line: 4, bytes: Buffer.byteLength(line) },
      repairedEvents: 0,
    })
    expect(bytesOf(file)).toBe(text)
  })

  it('cuts an unparsable final line at its byte offset after multi-byte lines spanning read chunks', async () => {
    const storage = jsonl()
    await storage.create(header('s1'))
    // Non-ASCII lines (2- and 4-byte characters) across the 64 KB read boundary shift byte offsets
    // away from character offsets; the cut must land on the byte where the bad line starts.
    const events = [
      userEvent(0, 'ü'.repeat(40_000)),
      userEvent(1, '😀'.repeat(20_000)),
      userEvent(2, 'plain'),
    ]
    await storage.appendBatch(id, events, 0)
    await storage.release(id)
    const file = join(dir, 's1.jsonl')
    const text = bytesOf(file)
    const bad = '{"type":"ü\n'
    appendFileSync(file, bad)
    const loaded = await jsonl().load(id)
    expect(loaded.events).toEqual(events)
    expect(Buffer.byteLength(bad)).toBe(12)
    expect(loaded.report).toEqual({ truncatedTail: { line: 5, bytes: 12 }, repairedEvents: 0 })
    expect(bytesOf(file)).toBe(text)
  })

  it('truncates an unparsable final line that has a newline', async () => {
    const { storage, file, text } = await stored(2)
    appendFileSync(file, '{"type":"user/mes\n')
    const loaded = await storage.load(id)
    expect(loaded.report).toEqual({ truncatedTail: { line: 4, bytes: 18 }, repairedEvents: 0 })
    expect(bytesOf(file)).toBe(text)
  })

  it('mends a torn tail before appending after acquire', async () => {
    const { file, text } = await stored(2)
    appendFileSync(file, '{"type":"us')
    const writer = jsonl()
    await writer.acquire(id)
    await writer.appendBatch(id, userEvents(2, 1), 2)
    expect(bytesOf(file)).toBe(text + lines([userEvent(2)]))
  })

  it('leaves a torn tail alone while another live writer holds the session', async () => {
    const { file } = await stored(2)
    const writer = jsonl()
    await writer.acquire(id)
    appendFileSync(file, '{"type":"us')
    const before = bytesOf(file)
    const loaded = await jsonl().load(id)
    expect(loaded.events).toEqual(userEvents(0, 2))
    expect(loaded.report).toEqual({ repairedEvents: 0 })
    expect(bytesOf(file)).toBe(before)
  })

  it('refuses an unparsable middle line with CORRUPT_LOG naming file, line and expected seq, leaving the file untouched', async () => {
    const { storage, file, text } = await stored(4)
    const broken = text.split('\n')
    broken[2] = '{"type":"user/message","seq":1,' // line 3 holds seq 1
    writeFileSync(file, broken.join('\n'))
    const before = bytesOf(file)
    const error = await errorOf(storage.load(id))
    expect(error).toEqual({
      code: 'CORRUPT_LOG',
      message: `${file}:3: corrupt log at expected seq 1: the line is not valid JSON`,
      where: { file, line: 3, seq: 1 },
    })
    expect(bytesOf(file)).toBe(before)
    expect(readdirSync(dir)).toEqual(['s1.jsonl'])
  })

  it('refuses a seq gap and a duplicate seq', async () => {
    const { storage, file, text } = await stored(3)
    const gap = text.split('\n')
    gap.splice(1, 1) // drop seq 0
    writeFileSync(file, gap.join('\n'))
    expect(await errorOf(storage.load(id))).toMatchObject({
      code: 'CORRUPT_LOG',
      message: `${file}:2: corrupt log at expected seq 0: found seq 1`,
    })
    writeFileSync(file, text + lines([userEvent(2)]))
    expect(await errorOf(storage.load(id))).toMatchObject({
      code: 'CORRUPT_LOG',
      message: `${file}:5: corrupt log at expected seq 3: found seq 2`,
    })
  })

  it('refuses a middle event that fails its schema', async () => {
    const { storage, file, text } = await stored(3)
    const bad = {
      ...userEvent(1),
      data: { id: 'm1', role: 'assistant', content: [], source: { kind: 'user' } },
    }
    const broken = text.split('\n')
    broken[2] = JSON.stringify(bad)
    writeFileSync(file, broken.join('\n'))
    const error = await errorOf(storage.load(id))
    expect(error.code).toBe('CORRUPT_LOG')
    expect(error.message).toMatch(
      new RegExp(
        `^${escapeRegExp(file)}:3: corrupt log at expected seq 1: invalid event: invalid user/message event at seq 1: data\\.role: `,
      ),
    )
    expect(error.where).toEqual({ file, line: 3, seq: 1 })
  })

  it('refuses a schema failure on the final complete line too (only a torn line is mended)', async () => {
    const { storage, file, text } = await stored(1)
    writeFileSync(file, `${text}${JSON.stringify({ ...userEvent(1), time: 'noon' })}\n`)
    const error = await errorOf(storage.load(id))
    expect(error.code).toBe('CORRUPT_LOG')
    expect(error.where).toEqual({ file, line: 3, seq: 1 })
  })

  it('refuses an unknown event type with its own error', async () => {
    const { storage, file, text } = await stored(1)
    writeFileSync(file, `${text}{"type":"weird/thing","seq":1,"time":5,"data":{}}\n${lines([userEvent(2)])}`)
    const before = bytesOf(file)
    expect(await errorOf(storage.load(id))).toEqual({
      code: 'UNKNOWN_EVENT_TYPE',
      message: `${file}:3: seq 1: unknown event type "weird/thing"`,
      where: { file, line: 3, seq: 1, eventType: 'weird/thing' },
    })
    expect(bytesOf(file)).toBe(before)
  })

  it('refuses a newer format version with its own error', async () => {
    const file = join(dir, 's1.jsonl')
    const newer = headerLine.replace('"version":1', '"version":3') + lines(userEvents(0, 1))
    writeFileSync(file, newer)
    const storage = jsonl()
    const message = `${file}:1: format version 3 is newer than this reader supports (2)`
    expect(await errorOf(storage.load(id))).toEqual({
      code: 'UNSUPPORTED_VERSION',
      message,
      where: { file, line: 1, sessionId: 's1' },
    })
    const listing = await storage.list()
    expect(listing.sessions).toEqual([])
    expect(
      listing.problems.map(({ path, sessionId, reason, error }) => ({
        path,
        sessionId,
        reason,
        code: error?.code,
      })),
    ).toEqual([{ path: file, sessionId: 's1', reason: message, code: 'UNSUPPORTED_VERSION' }])
    expect(bytesOf(file)).toBe(newer)
  })

  it('refuses a header that names another session or is missing', async () => {
    const file = join(dir, 's1.jsonl')
    writeFileSync(file, headerLine.replace('"s1"', '"s2"'))
    const storage = jsonl()
    expect(await errorOf(storage.load(id))).toMatchObject({
      code: 'CORRUPT_LOG',
      message: `${file}:1: header names session "s2", expected "s1"`,
    })
    writeFileSync(file, '')
    expect(await errorOf(storage.load(id))).toMatchObject({
      code: 'CORRUPT_LOG',
      message: `${file}:1: the file has no header line`,
    })
  })
})

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
