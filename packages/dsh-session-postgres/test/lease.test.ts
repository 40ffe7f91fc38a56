import { Context } from 'cordis'
import { CallId, createAssistantMessage, createUserMessage, MessageId, SessionId } from 'dsh-llm'
import Sessions, { SessionError, SessionErrorCode, type SessionEvent } from 'dsh-session'
import { fenceSessions, type PostgresStorage } from 'dsh-session-postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failure, header, stored, type TestDatabase, testDatabase, userEvents } from './support.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await testDatabase()
})
afterAll(async () => {
  await db.drop()
})

const NEVER = 3_600_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A writer whose lease lasts `ttl` ms and is renewed only when the test says so. */
function writer(name: string, ttl = 250): Promise<PostgresStorage> {
  return db.storage({ owner: name, leaseTtlMs: ttl, renewEveryMs: NEVER })
}

async function tokenIn(id: string): Promise<string> {
  const found = await db.pool.query<{ token: string }>(
    'SELECT token::text AS token FROM dsh_leases WHERE session_id = $1',
    [id],
  )
  return found.rows[0]?.token ?? 'none'
}

describe('leases', () => {
  it('refuses a second writer while the lease is held, naming the holder', async () => {
    const a = await writer('host-a', NEVER)
    const b = await writer('host-b')
    await a.create(header('l1'))
    expect(await failure(b.acquire(SessionId('l1')))).toMatchObject({
      name: 'SessionError',
      code: SessionErrorCode.LOCKED,
      message: expect.stringMatching(/^session l1 is held by another writer \(host-a\) until /),
    })
    await a.release(SessionId('l1'))
    await b.acquire(SessionId('l1'))
    expect(await tokenIn('l1')).toBe('2')
  })

  it('keeps a renewed lease past its TTL', async () => {
    const a = await db.storage({ owner: 'host-a', leaseTtlMs: 300, renewEveryMs: 50 })
    const b = await writer('host-b')
    await a.create(header('l2'))
    await sleep(700)
    expect(await failure(b.acquire(SessionId('l2')))).toMatchObject({ code: SessionErrorCode.LOCKED })
  })

  it('fences a deposed writer: after a takeover its append at the right seq fails LEASE_LOST and writes nothing', async () => {
    const a = await writer('host-a')
    const b = await writer('host-b')
    await a.create(header('l3'))
    await a.appendBatch(SessionId('l3'), userEvents(0, 2), 0)
    const lost: string[] = []
    a.onLeaseLost((sessionId, error) => lost.push(`${sessionId} ${error.code}`))
    await sleep(400)
    await b.acquire(SessionId('l3'))
    expect(await tokenIn('l3')).toBe('2')
    const loaded = await b.load(SessionId('l3'))
    expect(loaded.events).toHaveLength(2)
    // Seq 2 is exactly where the deposed writer would go next: only the token check can stop it.
    expect(await failure(a.appendBatch(SessionId('l3'), userEvents(2, 1), 2))).toEqual({
      name: 'SessionError',
      code: SessionErrorCode.LEASE_LOST,
      message:
        "session l3: append at seq 2 refused: this writer's fencing token 1 is stale (the lease now has token 2, owner host-b)",
    })
    expect(lost).toEqual(['l3 LEASE_LOST'])
    expect(a.holds(SessionId('l3'))).toBe(false)
    await b.appendBatch(SessionId('l3'), userEvents(2, 1), 2)
    expect(await failure(a.appendBatch(SessionId('l3'), userEvents(3, 1), 3))).toMatchObject({
      code: SessionErrorCode.LEASE_LOST,
    })
    expect((await stored(b, 'l3')).map((event) => event.seq)).toEqual([0, 1, 2])
  })

  it('tells a deposed writer at its next renewal, and its release frees nothing', async () => {
    const a = await writer('host-a')
    const b = await writer('host-b', NEVER)
    await a.create(header('l4'))
    await sleep(400)
    await b.acquire(SessionId('l4'))
    const lost: SessionError[] = []
    a.onLeaseLost((_sessionId, error) => lost.push(error))
    await a.renewNow()
    expect(lost.map((error) => [error.code, error.message])).toEqual([
      [
        SessionErrorCode.LEASE_LOST,
        'session l4: lease renewal found token 1 stale: another writer took the session over',
      ],
    ])
    await a.release(SessionId('l4'))
    const holder = await db.pool.query(
      'SELECT owner, token::text AS token FROM dsh_leases WHERE session_id = $1',
      ['l4'],
    )
    expect(holder.rows).toEqual([{ owner: 'host-b', token: '2' }])
  })

  it('orders a takeover against an in-flight append: what the new holder loads is all that ever lands', async () => {
    for (let round = 0; round < 15; round++) {
      const id = `race-${round}`
      const a = await writer(`a-${round}`, 1)
      const b = await writer(`b-${round}`, NEVER)
      await a.create(header(id))
      await a.appendBatch(SessionId(id), userEvents(0, 1), 0)
      await sleep(5)
      const late = a.appendBatch(SessionId(id), userEvents(1, 3), 1).then(
        () => 'landed',
        (error: unknown) => (error instanceof SessionError ? error.code : String(error)),
      )
      await b.acquire(SessionId(id))
      const seen = (await b.load(SessionId(id))).events.length
      const outcome = await late
      expect(outcome === 'landed' ? seen : 1).toBe(seen)
      if (outcome !== 'landed') expect(outcome).toBe(SessionErrorCode.LEASE_LOST)
      expect(await stored(b, id)).toHaveLength(seen)
      await a.close()
      await b.close()
    }
  }, 20_000)
})

describe('a deposed host over Sessions', () => {
  it('is repaired by the taker, fails its next barrier with LEASE_LOST, and stops appending', async () => {
    const storageA = await writer('host-a')
    const storageB = await writer('host-b', NEVER)
    const hostA = new Context()
    await hostA.plugin(Sessions, { storage: storageA })
    fenceSessions(hostA.sessions, storageA)
    const hostB = new Context()
    await hostB.plugin(Sessions, { storage: storageB })

    const session = await hostA.sessions.create({ id: SessionId('s1') })
    session.append(
      'user/message',
      createUserMessage({ id: 'u1', content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } }),
    )
    session.append('turn/start', { turn: 1, trigger: { kind: 'send', target: 'next-turn' } })
    session.append('step/start', { turn: 1, step: 1 })
    const call = { type: 'tool-call' as const, id: CallId('c1'), name: 'read', arguments: '{}' }
    session.append('assistant/message', {
      turn: 1,
      step: 1,
      message: createAssistantMessage({
        id: 'a1',
        content: [call],
        source: { kind: 'model', provider: 'p', model: 'm' },
      }),
    })
    session.append('tool/call', { turn: 1, step: 1, callId: CallId('c1'), name: 'read', arguments: '{}' })
    await session.flush()

    await sleep(400)
    const taken = await hostB.sessions.open(SessionId('s1'))
    expect(taken.loadReport).toEqual({ repairedEvents: 3 })
    expect(taken.events.slice(5).map((event: SessionEvent) => event.type)).toEqual([
      'tool/result',
      'step/end',
      'turn/end',
    ])

    session.append('tool/result', {
      turn: 1,
      step: 1,
      message: {
        id: MessageId('r1'),
        role: 'user',
        source: { kind: 'tool', callId: CallId('c1') },
        content: [
          { type: 'tool-result', toolCallId: CallId('c1'), content: [{ type: 'text', text: 'late' }] },
        ],
      },
    })
    const barrier = await failure(session.flush())
    expect(barrier).toMatchObject({ name: 'SessionError', code: SessionErrorCode.STORAGE })
    expect(barrier.message).toContain(
      "could not persist events 5..5: session s1: append at seq 5 refused: this writer's fencing token 1 is stale",
    )
    let refused: unknown
    try {
      session.append('step/end', { turn: 1, step: 1 })
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(SessionError)
    expect((refused as SessionError).message).toBe(
      "session s1: cannot append step/end at seq 6: this host's lease was taken over by another writer",
    )
    const log = await stored(storageB, 's1')
    expect(log.map((event) => event.type)).toEqual([
      'user/message',
      'turn/start',
      'step/start',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(log[5]?.data).toMatchObject({ error: { code: 'TOOL_OUTCOME_UNKNOWN' } })
    expect((refused as SessionError).code).toBe(SessionErrorCode.LEASE_LOST)
    await hostB.sessions.close(taken)
  })
})
