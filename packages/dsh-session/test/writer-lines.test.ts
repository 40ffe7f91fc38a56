/**
 * Issue 12 item 6, queued bytes off the JS heap: over a backend with `appendLines` the writer encodes
 * each event when it is enqueued and keeps the backlog in reused slabs. The bytes a backend reads at
 * the very end of a slow append must be exactly the events' JSON lines, whatever the queue did
 * meanwhile (slabs reused, a failed batch retried, events deferred over the mark, large events).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import {
  type EncodedLines,
  JsonlStorage,
  MemoryStorage,
  nodeAppendIo,
  type SessionEvent,
  SessionWriter,
} from 'dsh-session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { linePieces, RAW_STRING_UNITS } from '../src/storage/json-lines.ts'
import { header, tempDir, userEvent } from './fixtures/events.ts'

const id = SessionId('s1')
const KIB = 1024

/**
 * A backend taking lines that reads each batch's bytes only after a delay (as a slow disk would):
 * if the writer reused a slab too early, the copy shows it. Can be told to fail the next batches.
 */
class SlowLinesStorage extends MemoryStorage {
  readonly written: Buffer[] = []
  readonly counts: number[] = []
  failNext = 0

  async appendLines(sessionId: SessionId, lines: EncodedLines, expectedSeq: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 2))
    if (this.failNext > 0) {
      this.failNext--
      throw new Error('disk full')
    }
    const bytes = Buffer.concat(lines.chunks.map((chunk) => Buffer.from(chunk)))
    const events = bytes
      .toString('utf8')
      .split('\n')
      .slice(0, -1)
      .map((line) => JSON.parse(line) as SessionEvent)
    expect(events.length).toBe(lines.count)
    await this.appendBatch(sessionId, events, expectedSeq)
    this.written.push(bytes)
    this.counts.push(lines.count)
  }

  text(): string {
    return Buffer.concat(this.written).toString('utf8')
  }
}

const linesOf = (events: readonly SessionEvent[]) =>
  events.map((event) => `${JSON.stringify(event)}\n`).join('')

/** Text of `units` units with multi-byte characters, so UTF-8 lengths differ from string lengths. */
const text = (seq: number, units: number) => `${seq}:${'é€x'.repeat(Math.ceil(units / 3))}`.slice(0, units)

describe('SessionWriter over a backend that takes lines', () => {
  it('hands the backend exactly the JSON lines while slabs are reused behind a slow backend', async () => {
    const storage = new SlowLinesStorage()
    await storage.create(header('s1'))
    const writer = new SessionWriter(storage, id, 0, { highWaterMark: 512 * KIB, maxBatchBytes: 256 * KIB })
    const events: SessionEvent[] = []
    for (let seq = 0; seq < 120; seq++) {
      await writer.ready()
      // Small lines gathered as text; strings of 20 and 70 Ki units copied as they are, or escaped
      // (quotes, backslashes, control characters, surrogate pairs); a 300 Ki-unit string encoded in
      // pieces when its batch is taken.
      const units = seq % 40 === 7 ? 300 * KIB : seq % 3 === 0 ? 70 * KIB : seq % 5 === 1 ? 20 * KIB : 2 * KIB
      const awkward = seq % 2 === 0 ? `"\\\n\u0001\u{1f600}` : ''
      const event = userEvent(seq, `${awkward}${text(seq, units)}`)
      events.push(event)
      writer.enqueue(event)
    }
    await writer.flush()
    expect(storage.text()).toBe(linesOf(events))
    expect(storage.counts.reduce((a, b) => a + b, 0)).toBe(120)
    expect(storage.counts.length).toBeGreaterThan(10)
    expect(writer.unsyncedBytes).toBe(0)
  })

  it('encodes events enqueued past the mark (a producer that does not wait) when their batch is taken', async () => {
    const storage = new SlowLinesStorage()
    await storage.create(header('s1'))
    const writer = new SessionWriter(storage, id, 0, { highWaterMark: 64 * KIB })
    const events = Array.from({ length: 60 }, (_, seq) => userEvent(seq, text(seq, 5 * KIB)))
    for (const event of events) writer.enqueue(event)
    expect(writer.overHighWaterMark).toBe(true)
    await writer.flush()
    expect(storage.text()).toBe(linesOf(events))
  })

  it('retries a failed batch from the same bytes, without losing or repeating a line', async () => {
    const storage = new SlowLinesStorage()
    await storage.create(header('s1'))
    const writer = new SessionWriter(storage, id, 0, { highWaterMark: 256 * KIB, maxBatchBytes: 128 * KIB })
    const events = Array.from({ length: 30 }, (_, seq) => userEvent(seq, text(seq, 40 * KIB)))
    storage.failNext = 1
    for (const event of events.slice(0, 10)) writer.enqueue(event)
    await expect(writer.flush()).rejects.toMatchObject({
      code: 'STORAGE',
      message: 'session s1: could not persist events 0..2: disk full',
    })
    for (const event of events.slice(10)) writer.enqueue(event)
    await writer.flush()
    expect(storage.text()).toBe(linesOf(events))
  })

  it('fails the batch holding an event over the size limit with EVENT_TOO_LARGE, writing none of it', async () => {
    const storage = new SlowLinesStorage({ maxEventBytes: 8 * KIB })
    await storage.create(header('s1'))
    const writer = new SessionWriter(storage, id, 0)
    const small = userEvent(0, 'fits')
    const large = userEvent(1, 'x'.repeat(10 * KIB))
    writer.enqueue(small)
    writer.enqueue(large)
    const error = await writer.flush().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toMatchObject({ code: 'STORAGE', cause: { code: 'EVENT_TOO_LARGE' } })
    expect(storage.text()).toBe('')
  })
})

describe('linePieces', () => {
  it('joins to exactly JSON.stringify, long strings without escapes kept as they are', () => {
    const plain = 'p'.repeat(RAW_STRING_UNITS)
    const value = {
      a: plain,
      b: [`${plain}"`, `${plain}\u{1f600}`, `${plain}\ud800`, undefined, 1.5, null, true, { c: `é${plain}` }],
      skipped: undefined,
      short: 'x',
      nested: { list: [plain, 'y'], n: -2 },
    }
    const pieces = linePieces(value)
    expect(pieces.join('')).toBe(JSON.stringify(value))
    expect(pieces.filter((piece) => piece === plain).length).toBe(2)
    expect(pieces.includes(`é${plain}`)).toBe(true)
  })
})

describe('SessionWriter.ready() time slice', () => {
  it('lets timers run while a producer that awaits ready() before each append stays under the mark', async () => {
    const writer = new SessionWriter(new MemoryStorage(), id, 0)
    let fired = false
    setTimeout(() => {
      fired = true
    }, 0)
    const started = performance.now()
    // Without a yield this loop holds the event loop until its 2 s cap: ready() resolves at once.
    while (!fired && performance.now() - started < 2000) {
      await writer.ready()
      const until = performance.now() + 0.1
      while (performance.now() < until) {}
    }
    expect(fired).toBe(true)
  })
})

describe('JsonlStorage.appendLines', () => {
  let dir: string
  let dispose: () => void
  beforeEach(() => {
    ;({ dir, dispose } = tempDir())
  })
  afterEach(() => dispose())

  it('writes a session the writer fills behind a stalled sync byte for byte, and loads it back', async () => {
    const storage = new JsonlStorage({
      dir,
      io: {
        write: nodeAppendIo.write,
        sync: async (handle) => {
          await new Promise((resolve) => setTimeout(resolve, 3))
          await nodeAppendIo.sync(handle)
        },
      },
    })
    await storage.create(header('s1'))
    const writer = new SessionWriter(storage, id, 0, { highWaterMark: 256 * KIB })
    const events: SessionEvent[] = []
    for (let seq = 0; seq < 80; seq++) {
      await writer.ready()
      const event = userEvent(seq, text(seq, seq % 2 === 0 ? 66 * KIB : 300))
      events.push(event)
      writer.enqueue(event)
    }
    await writer.flush()
    await storage.close()
    const file = readFileSync(join(dir, 's1.jsonl'), 'utf8')
    expect(file.slice(file.indexOf('\n') + 1)).toBe(linesOf(events))
    expect((await new JsonlStorage({ dir }).load(id)).events).toEqual(events)
  })

  it('refuses lines at a seq that is not the next one with SEQ_MISMATCH and writes nothing', async () => {
    const storage = new JsonlStorage({ dir })
    await storage.create(header('s1'))
    const chunks = [Buffer.from(linesOf([userEvent(1)]))]
    await expect(storage.appendLines(id, { count: 1, chunks }, 1)).rejects.toMatchObject({
      code: 'SEQ_MISMATCH',
    })
    await storage.appendLines(id, { count: 1, chunks: [Buffer.from(linesOf([userEvent(0)]))] }, 0)
    await storage.close()
    expect((await new JsonlStorage({ dir }).load(id)).events).toEqual([userEvent(0)])
  })

  it('runs appends made while one is in flight after it, in call order, each checked against the seq before it', async () => {
    const storage = new JsonlStorage({ dir })
    await storage.create(header('s1'))
    const lines = (from: number, count: number): EncodedLines => {
      const events = Array.from({ length: count }, (_, i) => userEvent(from + i))
      return { count, chunks: [Buffer.from(linesOf(events))] }
    }
    // None awaited before the next is made: the first starts at once, the others queue behind it.
    const first = storage.appendLines(id, lines(0, 2), 0)
    const second = storage.appendLines(id, lines(2, 1), 2)
    const stale = storage.appendLines(
      id,
      { count: 1, chunks: [Buffer.from(linesOf([userEvent(2, 'other')]))] },
      2,
    )
    const third = storage.appendLines(id, lines(3, 2), 3)
    await Promise.all([first, second, third])
    await expect(stale).rejects.toMatchObject({ code: 'SEQ_MISMATCH' })
    await storage.close()
    const loaded = await new JsonlStorage({ dir }).load(id)
    expect(loaded.events).toEqual([0, 1, 2, 3, 4].map((seq) => userEvent(seq)))
  })

  it('reads the file’s next seq before the first append after acquire, and refuses a stale one', async () => {
    const writer = new JsonlStorage({ dir })
    await writer.create(header('s1'))
    await writer.appendLines(
      id,
      { count: 2, chunks: [Buffer.from(linesOf([userEvent(0), userEvent(1)]))] },
      0,
    )
    await writer.close()
    const storage = new JsonlStorage({ dir })
    await storage.acquire(id)
    const stale = { count: 1, chunks: [Buffer.from(linesOf([userEvent(1, 'other')]))] }
    await expect(storage.appendLines(id, stale, 1)).rejects.toMatchObject({ code: 'SEQ_MISMATCH' })
    await storage.appendLines(id, { count: 1, chunks: [Buffer.from(linesOf([userEvent(2)]))] }, 2)
    await storage.close()
    expect((await new JsonlStorage({ dir }).load(id)).events).toEqual([0, 1, 2].map((seq) => userEvent(seq)))
  })
})
