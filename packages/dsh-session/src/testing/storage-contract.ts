/**
 * The storage contract as a vitest suite: what every `SessionStorage` backend must guarantee. Run it
 * from a backend's own tests with `describeStorageContract('my backend', makeBacking)`.
 */
import { SessionId } from 'dsh-llm'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { SessionError, SessionErrorCode } from '../errors.ts'
import { defineSessionEvent } from '../schemas.ts'
import type { SessionStorage } from '../storage/types.ts'
import { SessionWriter } from '../storage/writer.ts'
import type { SessionEvent } from '../types.ts'
import { contractEvent, contractEvents, contractHeader } from './contract-events.ts'
import { describeRunCases } from './contract-runs.ts'
import type {
  ContractFaults,
  ContractOpenOptions,
  StorageContractBacking,
  StorageContractFactory,
  StorageContractPowers,
} from './contract-types.ts'

/** The `code` and `where` of a rejection (fails the test if `promise` resolves or rejects untyped). */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; where: SessionError['where'] }> {
  try {
    await promise
  } catch (error) {
    if (!(error instanceof SessionError)) throw new Error(`expected a SessionError, got ${String(error)}`)
    return { code: error.code, where: error.where }
  }
  throw new Error('expected a rejection')
}

/**
 * `storage` whose appends (`appendBatch`, and `appendLines` when it has it) reject with
 * `APPEND_OUTCOME_UNKNOWN` while `lose()` says so — after storing the batch when `landed` (a reply
 * lost after the commit), before it otherwise (a request lost before it arrived).
 */
function withUnknownOutcome(storage: SessionStorage, landed: boolean, lose: () => boolean): SessionStorage {
  const unknown = (sessionId: SessionId, seq: number) =>
    new SessionError(
      SessionErrorCode.APPEND_OUTCOME_UNKNOWN,
      `session ${sessionId}: reply lost (contract fault)`,
      {
        sessionId,
        seq,
      },
    )
  const faulty = async (sessionId: SessionId, seq: number, append: () => Promise<void>): Promise<void> => {
    if (!lose()) return append()
    if (landed) await append()
    throw unknown(sessionId, seq)
  }
  const wrapped: SessionStorage = {
    create: (header) => storage.create(header),
    acquire: (sessionId) => storage.acquire(sessionId),
    appendBatch: (sessionId, events, seq) =>
      faulty(sessionId, seq, () => storage.appendBatch(sessionId, events, seq)),
    load: (sessionId) => storage.load(sessionId),
    read: (sessionId, fromSeq) => storage.read(sessionId, fromSeq),
    list: () => storage.list(),
    release: (sessionId) => storage.release(sessionId),
    close: () => storage.close(),
  }
  const { appendLines } = storage
  if (appendLines !== undefined) {
    const lines = appendLines.bind(storage)
    return {
      ...wrapped,
      appendLines: (sessionId, batch, seq) => faulty(sessionId, seq, () => lines(sessionId, batch, seq)),
    }
  }
  return wrapped
}

async function eventsOf(storage: SessionStorage, id: SessionId): Promise<SessionEvent[]> {
  return [...(await storage.load(id)).events]
}

/**
 * Defines, with vitest, the cases every storage backend must pass: ordered appends with expected
 * seqs and conflict errors, a `SessionWriter`'s batches (through `appendLines` when the backend offers
 * it), load after reopen, a live store's chunk runs (split across writes, a crash mid-run, a fork
 * after a run), size limit, leases, two instances at once, list,
 * close/release on every path, and — for the `powers` a backend passes — torn writes, takeover of
 * a dead holder's lease and bad entries in `list()`. `makeBacking` is called once per case.
 */
export function describeStorageContract<B extends StorageContractBacking>(
  name: string,
  makeBacking: StorageContractFactory<B>,
  powers: StorageContractPowers<B> = {},
): void {
  describe(`storage contract: ${name}`, () => {
    let backing: B | undefined
    const opened: SessionStorage[] = []

    async function fresh(): Promise<B> {
      backing = await makeBacking()
      return backing
    }
    async function open(
      from: StorageContractBacking,
      options?: ContractOpenOptions,
    ): Promise<SessionStorage> {
      const storage = await from.open(options)
      opened.push(storage)
      return storage
    }
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close().catch(() => undefined)
      await backing?.cleanup?.()
      backing = undefined
    })

    const id = SessionId('contract-1')
    const other = SessionId('contract-2')

    it('appends batches in seq order and loads and reads them back unchanged', async () => {
      const storage = await open(await fresh())
      await storage.create(contractHeader(id))
      const events = contractEvents(0, 5)
      await storage.appendBatch(id, events.slice(0, 2), 0)
      await storage.appendBatch(id, events.slice(2), 2)
      await storage.appendBatch(id, [], 5)
      const loaded = await storage.load(id)
      expect(loaded.header).toEqual(contractHeader(id))
      expect(loaded.events).toEqual(events)
      expect(loaded.report).toEqual({ repairedEvents: 0 })
      const tail: number[] = []
      for await (const event of storage.read(id, 3)) tail.push(event.seq)
      expect(tail).toEqual([3, 4])
    })

    it('refuses a batch at the wrong seq or with a gap with SEQ_MISMATCH and writes none of it', async () => {
      const storage = await open(await fresh())
      await storage.create(contractHeader(id))
      await storage.appendBatch(id, contractEvents(0, 2), 0)
      expect((await refusal(storage.appendBatch(id, contractEvents(3, 1), 3))).code).toBe('SEQ_MISMATCH')
      expect((await refusal(storage.appendBatch(id, [contractEvent(1, 'not what is stored')], 1))).code).toBe(
        'SEQ_MISMATCH',
      )
      const gap = [contractEvent(2), contractEvent(4)]
      expect((await refusal(storage.appendBatch(id, gap, 2))).code).toBe('SEQ_MISMATCH')
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 2))
      await storage.appendBatch(id, contractEvents(2, 1), 2)
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 3))
    })

    it('takes a SessionWriter’s batches (as encoded lines when it offers appendLines) and loads them unchanged', async () => {
      const storage = await open(await fresh())
      await storage.create(contractHeader(id))
      const writer = new SessionWriter(storage, id, 0, { highWaterMark: 64 * 1024, maxBatchBytes: 16 * 1024 })
      const events: SessionEvent[] = []
      for (let seq = 0; seq < 24; seq++) {
        // Short lines, and strings of 20 Ki units: plain, multi-byte, and with characters to escape.
        const long = ['', 'p'.repeat(20_480), 'é€'.repeat(10_240), `"\\\n${'q'.repeat(20_480)}`][seq % 4]
        events.push(contractEvent(seq, `message ${seq}${long}`))
        await writer.ready()
        writer.enqueue(events[seq] as SessionEvent)
      }
      await writer.flush()
      expect(await eventsOf(storage, id)).toEqual(events)
      const stale = new SessionWriter(storage, id, 2)
      stale.enqueue(contractEvent(2))
      const error = await stale.flush().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toMatchObject({ code: 'STORAGE', cause: { code: 'SEQ_MISMATCH' } })
      expect(await eventsOf(storage, id)).toEqual(events)
    })

    it('settles a retried batch that was stored: found whole or in part, never written twice; other events are SEQ_MISMATCH', async () => {
      const storage = await open(await fresh())
      await storage.create(contractHeader(id))
      await storage.appendBatch(id, contractEvents(0, 3), 0)
      await storage.appendBatch(id, contractEvents(0, 3), 0)
      await storage.appendBatch(id, contractEvents(1, 2), 1)
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 3))
      await storage.appendBatch(id, contractEvents(2, 3), 2)
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 5))
      const other = [contractEvent(3), contractEvent(4, 'not what is stored'), contractEvent(5)]
      expect(await refusal(storage.appendBatch(id, other, 3))).toEqual({
        code: 'SEQ_MISMATCH',
        where: expect.objectContaining({ sessionId: id }),
      })
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 5))
    })

    it('refuses with the catalog’s error what its load would refuse, writes none of the batch, and still loads', async () => {
      const storage = await open(await fresh())
      await storage.create(contractHeader(id))
      await storage.appendBatch(id, contractEvents(0, 1), 0)
      const unknown = { ...contractEvent(2), type: 'contract/never-defined' } as unknown as SessionEvent
      expect(await refusal(storage.appendBatch(id, [contractEvent(1), unknown], 1))).toEqual({
        code: 'UNKNOWN_EVENT_TYPE',
        where: expect.objectContaining({ sessionId: id, seq: 2, eventType: 'contract/never-defined' }),
      })
      const invalid = {
        ...contractEvent(1),
        data: { role: 'user', content: 'not blocks' },
      } as unknown as SessionEvent
      expect(await refusal(storage.appendBatch(id, [invalid], 1))).toEqual({
        code: 'INVALID_EVENT',
        where: expect.objectContaining({ sessionId: id, seq: 1, eventType: 'user/message' }),
      })
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 1))
      await storage.appendBatch(id, contractEvents(1, 1), 1)
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 2))
    })

    it('loads and validates: an event whose type lost its definition after it was stored is UNKNOWN_EVENT_TYPE', async () => {
      const storage = await open(await fresh())
      await storage.create(contractHeader(id))
      const type = `contract/short-lived-${Math.random().toString(36).slice(2)}`
      const undefine = defineSessionEvent(type, { schema: z.object({ n: z.number() }) })
      try {
        await storage.appendBatch(
          id,
          [contractEvent(0), { type, seq: 1, time: 1, data: { n: 1 } } as unknown as SessionEvent],
          0,
        )
      } finally {
        undefine()
      }
      expect(await refusal(storage.load(id))).toEqual({
        code: 'UNKNOWN_EVENT_TYPE',
        where: expect.objectContaining({ seq: 1, eventType: type }),
      })
    })

    for (const landed of [true, false])
      it(`lets a SessionWriter settle an append whose outcome was unknown (${landed ? 'it landed' : 'it did not'}): each event stored once`, async () => {
        const storage = await open(await fresh())
        await storage.create(contractHeader(id))
        let lose = 1
        const unreliable = withUnknownOutcome(storage, landed, () => lose-- > 0)
        const writer = new SessionWriter(unreliable, id, 0)
        for (const event of contractEvents(0, 3)) writer.enqueue(event)
        await writer.flush()
        for (const event of contractEvents(3, 2)) writer.enqueue(event)
        await writer.flush()
        expect(writer.durableSeq).toBe(5)
        expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 5))
      })

    it('refuses a taken id with ALREADY_EXISTS and a missing one with NOT_FOUND', async () => {
      const storage = await open(await fresh())
      await storage.create(contractHeader(id))
      expect((await refusal(storage.create(contractHeader(id)))).code).toBe('ALREADY_EXISTS')
      expect((await refusal(storage.acquire(other))).code).toBe('NOT_FOUND')
      expect((await refusal(storage.load(other))).code).toBe('NOT_FOUND')
    })

    it('loads what another instance wrote, and continues it at the next seq after taking the lease', async () => {
      const from = await fresh()
      const writer = await open(from)
      await writer.create(contractHeader(id))
      await writer.appendBatch(id, contractEvents(0, 3), 0)
      await writer.close()
      const reopened = await open(from)
      expect(await eventsOf(reopened, id)).toEqual(contractEvents(0, 3))
      await reopened.acquire(id)
      await reopened.appendBatch(id, contractEvents(3, 2), 3)
      expect(await eventsOf(await open(from), id)).toEqual(contractEvents(0, 5))
    })

    it('refuses an event over the size limit with EVENT_TOO_LARGE, writes none of its batch, and takes the next append', async () => {
      const storage = await open(await fresh(), { maxEventBytes: 4096 })
      await storage.create(contractHeader(id))
      await storage.appendBatch(id, contractEvents(0, 1), 0)
      const batch = [contractEvent(1), contractEvent(2, 'x'.repeat(5000))]
      expect(await refusal(storage.appendBatch(id, batch, 1))).toEqual({
        code: 'EVENT_TOO_LARGE',
        where: expect.objectContaining({ sessionId: id, eventType: 'user/message', seq: 2 }),
      })
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 1))
      await storage.appendBatch(id, contractEvents(1, 2), 1)
      expect(await eventsOf(storage, id)).toEqual(contractEvents(0, 3))
    })

    it('gives a session one lease holder: LOCKED for a second acquire (any instance) and for appends without it', async () => {
      const from = await fresh()
      const first = await open(from)
      const second = await open(from)
      await first.create(contractHeader(id))
      expect((await refusal(second.acquire(id))).code).toBe('LOCKED')
      expect((await refusal(first.acquire(id))).code).toBe('LOCKED')
      expect((await refusal(second.appendBatch(id, contractEvents(0, 1), 0))).code).toBe('LOCKED')
      await first.appendBatch(id, contractEvents(0, 1), 0)
      await first.release(id)
      expect((await refusal(first.appendBatch(id, contractEvents(1, 1), 1))).code).toBe('LOCKED')
      await second.acquire(id)
      await second.appendBatch(id, contractEvents(1, 1), 1)
      expect(await eventsOf(first, id)).toEqual(contractEvents(0, 2))
    })

    it('lets two instances write two sessions at once, and gives a raced lease to exactly one', async () => {
      const from = await fresh()
      const a = await open(from)
      const b = await open(from)
      await Promise.all([a.create(contractHeader(id)), b.create(contractHeader(other, 1_700_000_000_001))])
      const writes: Promise<void>[] = []
      for (let i = 0; i < 4; i++) {
        writes.push(a.appendBatch(id, contractEvents(i * 2, 2), i * 2))
        writes.push(b.appendBatch(other, contractEvents(i * 3, 3), i * 3))
      }
      await Promise.all(writes)
      expect(await eventsOf(b, id)).toEqual(contractEvents(0, 8))
      expect(await eventsOf(a, other)).toEqual(contractEvents(0, 12))
      await a.close()
      await b.close()
      const c = await open(from)
      const d = await open(from)
      const outcomes = await Promise.allSettled([c.acquire(id), d.acquire(id)])
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected'])
      const lost = outcomes.find((outcome) => outcome.status === 'rejected')
      expect(lost?.status === 'rejected' && (lost.reason as SessionError).code).toBe('LOCKED')
    })

    it('lists every session oldest first with no problems', async () => {
      const storage = await open(await fresh())
      await storage.create(contractHeader(other, 2))
      await storage.create(contractHeader(id, 1))
      expect(await storage.list()).toEqual({
        sessions: [contractHeader(id, 1), contractHeader(other, 2)],
        problems: [],
      })
    })

    it('settles pending appends before release and close resolve, and leaves no lease behind', async () => {
      const from = await fresh()
      const storage = await open(from)
      await storage.create(contractHeader(id))
      await storage.create(contractHeader(other))
      const pending = [
        storage.appendBatch(id, contractEvents(0, 2), 0),
        storage.appendBatch(other, contractEvents(0, 1), 0),
      ]
      const released = storage.release(id)
      await storage.close()
      await released
      await Promise.all(pending)
      await storage.close()
      await storage.release(id)
      const next = await open(from)
      await next.acquire(id)
      await next.acquire(other)
      expect(await eventsOf(next, id)).toEqual(contractEvents(0, 2))
      expect(await eventsOf(next, other)).toEqual(contractEvents(0, 1))
      expect((await refusal(storage.appendBatch(id, contractEvents(2, 1), 2))).code).toBe('LOCKED')
    })

    describeRunCases(fresh, open, id)

    const { tearTail, abandonLease, plantBadEntry } = powers
    if (tearTail !== undefined)
      it('loads every complete event before a torn write, reports the torn tail, and appends after it', async () => {
        const from = await fresh()
        const writer = await open(from)
        await writer.create(contractHeader(id))
        await writer.appendBatch(id, contractEvents(0, 3), 0)
        await writer.close()
        await tearTail(from, id)
        const reader = await open(from)
        await reader.acquire(id)
        const loaded = await reader.load(id)
        expect(loaded.events).toEqual(contractEvents(0, 3))
        expect(loaded.report.truncatedTail).toBeDefined()
        await reader.appendBatch(id, contractEvents(3, 2), 3)
        const again = await (await open(from)).load(id)
        expect(again.events).toEqual(contractEvents(0, 5))
        expect(again.report.truncatedTail).toBeUndefined()
      })

    if (abandonLease !== undefined)
      it("takes a dead holder's lease over, and the deposed holder stops with LEASE_LOST", async () => {
        const from = await fresh()
        const dead = await open(from)
        await dead.create(contractHeader(id))
        await dead.appendBatch(id, contractEvents(0, 2), 0)
        await abandonLease(from, dead, id)
        const heir = await open(from)
        await heir.acquire(id)
        expect(await refusal(dead.appendBatch(id, contractEvents(2, 1), 2))).toEqual({
          code: 'LEASE_LOST',
          where: expect.objectContaining({ sessionId: id }),
        })
        await heir.appendBatch(id, [contractEvent(2, 'from the heir')], 2)
        await dead.release(id).catch(() => undefined)
        expect((await refusal((await open(from)).acquire(id))).code).toBe('LOCKED')
        expect(await eventsOf(heir, id)).toEqual([...contractEvents(0, 2), contractEvent(2, 'from the heir')])
      })

    const { openFaulty } = powers
    if (openFaulty !== undefined) {
      /**
       * An append hit by a fault either resolves (the backend settled it) or rejects with
       * `APPEND_OUTCOME_UNKNOWN` (or `STORAGE` when nothing was sent); retrying it then resolves.
       */
      async function appendThroughFault(
        storage: SessionStorage,
        events: SessionEvent[],
        seq: number,
      ): Promise<string> {
        try {
          await storage.appendBatch(id, events, seq)
          return 'settled by the backend'
        } catch (error) {
          if (!(error instanceof SessionError))
            throw new Error(`expected a SessionError, got ${String(error)}`)
          expect(['APPEND_OUTCOME_UNKNOWN', 'STORAGE']).toContain(error.code)
          await storage.appendBatch(id, events, seq)
          return error.code
        }
      }

      for (const [point, inject] of [
        ['after its commit', (faults: ContractFaults) => faults.cutAfterCommit()],
        ['before it was sent', (faults: ContractFaults) => faults.cutBeforeSend()],
      ] as const)
        it(`settles an append whose connection was cut ${point}: stored exactly once, and the session goes on`, async () => {
          const from = await fresh()
          const faults = await openFaulty(from)
          opened.push(faults.storage)
          await faults.storage.create(contractHeader(id))
          await faults.storage.appendBatch(id, contractEvents(0, 2), 0)
          inject(faults)
          await appendThroughFault(faults.storage, contractEvents(2, 2), 2)
          await faults.storage.appendBatch(id, contractEvents(4, 1), 4)
          expect(await eventsOf(await open(from), id)).toEqual(contractEvents(0, 5))
          const writer = new SessionWriter(faults.storage, id, 5)
          inject(faults)
          for (const event of contractEvents(5, 3)) writer.enqueue(event)
          await writer.flush().catch(() => writer.flush())
          expect(await eventsOf(await open(from), id)).toEqual(contractEvents(0, 8))
        })

      if (abandonLease !== undefined)
        it('refuses with LEASE_LOST an append held in flight past a takeover, and stores only the heir’s events', async () => {
          const from = await fresh()
          const faults = await openFaulty(from)
          opened.push(faults.storage)
          const deposed = faults.storage
          await deposed.create(contractHeader(id))
          await deposed.appendBatch(id, contractEvents(0, 2), 0)
          const release = faults.hold()
          const held = deposed.appendBatch(id, contractEvents(2, 1), 2).then(
            () => undefined,
            (error: unknown) => error,
          )
          await abandonLease(from, deposed, id)
          const heir = await open(from)
          await heir.acquire(id)
          await heir.appendBatch(id, [contractEvent(2, 'from the heir')], 2)
          release()
          expect(await held).toMatchObject({
            code: 'LEASE_LOST',
            where: expect.objectContaining({ sessionId: id }),
          })
          expect(await eventsOf(heir, id)).toEqual([
            ...contractEvents(0, 2),
            contractEvent(2, 'from the heir'),
          ])
        })
    }

    if (plantBadEntry !== undefined)
      it('lists bad entries as problems beside the good sessions and still opens the good ones', async () => {
        const from = await fresh()
        const storage = await open(from)
        await storage.create(contractHeader(id))
        await storage.appendBatch(id, contractEvents(0, 1), 0)
        const path = await plantBadEntry(from)
        const listing = await storage.list()
        expect(listing.sessions).toEqual([contractHeader(id)])
        expect(listing.problems).toEqual([
          expect.objectContaining({ path, reason: expect.stringMatching(/\S/) }),
        ])
        await storage.release(id)
        const reader = await open(from)
        await reader.acquire(id)
        expect(await eventsOf(reader, id)).toEqual(contractEvents(0, 1))
      })
  })
}
