/**
 * Record/replay across compactions: a turn that compacts several times is recorded through dsh-replay
 * (the loop's requests and the summarizing calls alike), then replayed with no model at all. The
 * replayed run sends the same requests, misses none, and logs the same events and surface.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkSessionLog } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { userText } from 'dsh-llm'
import { recordReplay } from 'dsh-replay'
import type { SessionEvent } from 'dsh-session'
import { afterAll, describe, expect, test } from 'vitest'
import { compactingApp, readingBehaviour, windowModel } from './support.ts'

installInvariantGuard()

const dir = mkdtempSync(join(tmpdir(), 'dsh-compaction-replay-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** What a run logged, without what differs between runs by design (times and minted message ids). */
function shape(events: readonly SessionEvent[]): unknown[] {
  return events.map((event) => ({ type: event.type, seq: event.seq, surface: event.surface?.op }))
}

async function run(mode: 'record' | 'replay', fixture: string) {
  const app = await compactingApp({ compaction: { contextWindows: { small: 16_000 } } })
  const model = windowModel(16_000, readingBehaviour(30))
  const replay = recordReplay({ fixture, mode, ...(mode === 'record' ? { adapter: model.adapter } : {}) })
  app.llm.registerAdapter('test', replay)
  const agent = await app.agentLoop.create({ provider: 'test', model: 'small', maxSteps: 100 })
  const result = await agent.prompt(userText('read thirty files'))
  const events = agent.session.events.slice()
  const texts = agent.session.deriveMessages().map((message) => JSON.stringify(message.content))
  await app.fiber.dispose()
  return { result, events, texts, replay, model }
}

describe('record/replay across compactions', () => {
  test('a compacting turn replays from its fixture with no model, the same events and surface', async () => {
    const fixture = join(dir, 'compacting.json')
    const recorded = await run('record', fixture)
    expect(recorded.result.text).toBe('done')
    const starts = recorded.events.filter((event) => event.type === 'compaction/start')
    // Summaries ran, so the summarizing calls were recorded and replayed beside the loop's requests.
    expect(starts.map((event) => event.type === 'compaction/start' && event.data.strategy)).toContain(
      'summarize',
    )
    expect(recorded.replay.exchanges.length).toBe(recorded.model.log.requests.length)

    const replayed = await run('replay', fixture)
    expect(replayed.replay.misses).toEqual([])
    expect(replayed.model.log.requests).toEqual([]) // the model was never called
    expect(replayed.result.text).toBe('done')
    expect(shape(replayed.events)).toEqual(shape(recorded.events))
    expect(replayed.texts).toEqual(recorded.texts)
    expect(checkSessionLog(replayed.events)).toEqual([])
  })
})
