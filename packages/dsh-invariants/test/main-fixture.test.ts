/**
 * Issue 30, "no behaviour change": a JSONL session file written by main before the event catalog
 * (commit 7400669, format version 1: one tool-call step, one text step, chunks folded into runs in
 * memory) still loads through JsonlStorage and checks clean offline, with the requests it implies.
 */
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { checkSessionLog, readRecordedLog, reconstructRequests } from 'dsh-invariants'
import { SessionId } from 'dsh-llm'
import Sessions, { JsonlStorage } from 'dsh-session'
import { afterAll, describe, expect, it } from 'vitest'

const FIXTURE = new URL('./fixtures/main-2026-12-01.jsonl', import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), 'dsh-main-fixture-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('a session file written by main before issue 30', () => {
  it('reads and checks clean offline, implying the two requests of its two steps', () => {
    const log = readRecordedLog(FIXTURE)
    expect(log.header).toMatchObject({ format: 'dsh-session', version: 1, sessionId: 'main-fixture' })
    expect(log.events.length).toBe(25)
    expect(checkSessionLog(log.events, { parent: null })).toEqual([])
    const requests = reconstructRequests(log.events)
    expect(requests.map((request) => request.messages.map((message) => message.id))).toEqual([
      ['u1'],
      ['u1', 'a1', 'r1'],
    ])
    expect(requests[0]).toMatchObject({
      provider: 'p',
      model: 'm',
      reasoningEffort: 'low',
      system: 'be brief',
    })
  })

  it('loads through JsonlStorage unchanged, with nothing to repair, and the same events', async () => {
    const file = join(dir, 'main-fixture.jsonl')
    copyFileSync(FIXTURE, file)
    chmodSync(file, 0o644) // the mode main created session files with
    const app = new Context()
    await app.plugin(Sessions, { storage: new JsonlStorage({ dir }) })
    const session = await app.sessions.open(SessionId('main-fixture'))
    // Nothing repaired; the file others can read is reported (issue 37), not changed.
    expect(session.loadReport).toEqual({
      repairedEvents: 0,
      exposed: { sessionId: 'main-fixture', path: file, mode: 0o644 },
    })
    expect(JSON.parse(JSON.stringify(session.events))).toEqual(
      JSON.parse(JSON.stringify(readRecordedLog(FIXTURE).events)),
    )
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['u1', 'a1', 'r1', 'a2'])
    expect(structuredClone(session.events).length).toBe(25)
  })
})
