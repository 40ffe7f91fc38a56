/**
 * Connections cut at random points of appends (issue 31): a writer that goes on through every cut
 * leaves each acknowledged event stored exactly once, never wedges, and sees only typed errors.
 * `DSH_PG_CUT_ROUNDS=N` sets the rounds (default 30; CI's PostgreSQL step runs 200).
 */
import { SessionId } from 'dsh-llm'
import { SessionError, type SessionEvent, SessionWriter } from 'dsh-session'
import type { PostgresStorage } from 'dsh-session-postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CutPoint, FaultProxy } from './fault-proxy.ts'
import { failure, header, stored, type TestDatabase, testDatabase, userEvent, userEvents } from './support.ts'

const ROUNDS = Number(process.env.DSH_PG_CUT_ROUNDS ?? 30)
const POINTS: readonly CutPoint[] = ['before-send', 'mid-request', 'after-commit', 'mid-reply']

let db: TestDatabase
let proxy: FaultProxy
let through: PostgresStorage
beforeAll(async () => {
  db = await testDatabase()
  const direct = new URL(db.url)
  proxy = await FaultProxy.start(direct.hostname, Number(direct.port || 5432))
  through = await db.storage({
    connectionString: proxy.through(db.url),
    statementTimeoutMs: 2_000,
    connectionTimeoutMs: 2_000,
  })
})
afterAll(async () => {
  await through.close().catch(() => undefined)
  await proxy.close()
  await db.drop()
})

/** A small deterministic generator, so a failing round can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0
    return state / 2 ** 32
  }
}

describe('appends with connections cut at random points', () => {
  it('a lost COMMIT reply is settled by the retry, not turned into a permanent SEQ_MISMATCH (issue 31 item 1)', async () => {
    const id = SessionId('lost-reply')
    await through.create(header(id))
    await through.appendBatch(id, userEvents(0, 1), 0)
    proxy.arm('after-commit')
    await through.appendBatch(id, userEvents(1, 2), 1)
    expect(proxy.pending).toBe(false)
    // The batch committed once; retrying it (as a writer that heard nothing would) succeeds.
    await through.appendBatch(id, userEvents(1, 2), 1)
    await through.appendBatch(id, userEvents(3, 1), 3)
    expect(await stored(through, id)).toEqual(userEvents(0, 4))
    // Other events at a stored seq are still a conflict.
    expect(await failure(through.appendBatch(id, [userEvent(3, 'other')], 3))).toMatchObject({
      code: 'SEQ_MISMATCH',
    })
  })

  it('a lease renewal hung on a held connection does not stall the next renewNow (issue 31 item 1)', async () => {
    const renewing = await db.storage({ connectionString: proxy.through(db.url), renewEveryMs: 300 })
    const id = SessionId('renewal')
    await renewing.create(header(id))
    const expiry = async () =>
      (
        await db.pool.query<{ at: string }>(
          'SELECT expires_at::text AS at FROM dsh_leases WHERE session_id = $1',
          [id],
        )
      ).rows[0]?.at
    const before = await expiry()
    const release = proxy.hold()
    const hung = renewing.renewNow()
    hung.catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 400))
    const within = new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 3_000))
    expect(await Promise.race([renewing.renewNow().then(() => 'renewed'), within])).toBe('renewed')
    expect(await expiry()).not.toBe(before)
    expect(renewing.holds(id)).toBe(true)
    release()
  })

  it(
    `${ROUNDS} rounds of "cut the connection at a random point of an append, then go on": every acknowledged event stored exactly once`,
    async () => {
      const id = SessionId('cut-rounds')
      await through.create(header(id))
      const writer = new SessionWriter(through, id, 0, { commitDelayMs: 0 })
      const next = random(31)
      const acknowledged: SessionEvent[] = []
      const codes = new Map<string, number>()
      let seq = 0
      for (let round = 0; round < ROUNDS; round++) {
        const batch: SessionEvent[] = []
        const count = 1 + Math.floor(next() * 3)
        for (let i = 0; i < count; i++) batch.push(userEvent(seq++, `round ${round} event ${i}`))
        proxy.arm(POINTS[Math.floor(next() * POINTS.length)] as CutPoint, 0.1 + next() * 0.8)
        for (const event of batch) writer.enqueue(event)
        let flushed = false
        for (let attempt = 0; attempt < 5 && !flushed; attempt++) {
          try {
            await writer.flush()
            flushed = true
          } catch (error) {
            // Only typed errors, and the session is not wedged: a later flush goes through.
            expect(error).toBeInstanceOf(SessionError)
            const code = (error as SessionError).code
            codes.set(code, (codes.get(code) ?? 0) + 1)
          }
        }
        expect(flushed, `round ${round}: the writer is wedged`).toBe(true)
        proxy.disarm()
        acknowledged.push(...batch)
      }
      expect(writer.durableSeq).toBe(seq)
      const direct = await db.storage()
      const events = await stored(direct, id)
      expect(events.map((event) => event.seq)).toEqual(acknowledged.map((event) => event.seq))
      expect(events).toEqual(acknowledged)
      expect(proxy.stats.cuts).toBeGreaterThan(ROUNDS / 2)
      console.log(
        `cut rounds: ${ROUNDS}, cuts ${proxy.stats.cuts}, connections ${proxy.stats.connections}, flush errors ${JSON.stringify(Object.fromEntries(codes))}`,
      )
    },
    60_000 + ROUNDS * 2_000,
  )
})
