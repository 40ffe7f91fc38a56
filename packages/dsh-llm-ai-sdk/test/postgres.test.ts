/// <reference path="../../dsh-session-postgres/test/global-setup.ts" />
/**
 * Must show: the Claude thinking replay through the PostgreSQL store (embedded PostgreSQL): the turn
 * is written by one app, read back by a fresh app on a fresh connection, and the next request body
 * carries every signature and redacted block byte-identical, in order.
 */
import { SessionId, userText } from 'dsh-llm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type TestDatabase, testDatabase } from '../../dsh-session-postgres/test/support.ts'
import { AGENT_OPTIONS, agentApp, EXPECTED_REPLAY, opaqueInOrder, replayBlocks } from './agent.ts'
import * as fx from './fixtures/anthropic.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await testDatabase()
}, 60_000)
afterAll(async () => {
  await db.drop()
})

describe('Claude thinking replay through PostgreSQL', () => {
  it('a fresh app on a fresh connection sends every signature and redacted block byte-identical', async () => {
    const id = SessionId('claude-pg-replay')
    const first = await agentApp(fx.agentTurn, await db.storage())
    const agent = await first.app.agentLoop.create({ ...AGENT_OPTIONS, sessionId: id })
    agent.send(userText('What is the weather and time in Paris?'))
    await agent.whenIdle()
    await agent.dispose()
    await first.app.sessions.close(agent.session)
    expect(first.invariants.violations).toEqual([])

    const second = await agentApp([fx.nextTurn], await db.storage())
    const resumed = await second.app.agentLoop.resume(id, AGENT_OPTIONS)
    resumed.send(userText('Thanks!'))
    await resumed.whenIdle()
    const body = second.recorded.requests[0]?.body ?? ''
    expect(replayBlocks(body)).toEqual(EXPECTED_REPLAY)
    expect(opaqueInOrder(body)).toEqual([
      fx.SIGNATURES.weather,
      fx.SIGNATURES.redacted,
      fx.SIGNATURES.second,
      fx.SIGNATURES.redactedSecond,
    ])
    await resumed.dispose()
    await second.app.sessions.close(resumed.session)
    expect(second.invariants.violations).toEqual([])
    expect(second.invariants.counters.requestsChecked).toBe(1)
  }, 120_000)
})
