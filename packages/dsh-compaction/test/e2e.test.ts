import { checkSessionLog } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { userText } from 'dsh-llm'
import { describe, expect, test } from 'vitest'
import { compactingApp, readingBehaviour, windowModel } from './support.ts'

installInvariantGuard()

describe('a long turn in a 16k window', () => {
  test('compacts before each step that would cross 80% and never sends a request over the window', async () => {
    const app = await compactingApp({ compaction: { contextWindows: { small: 16_000 } } })
    const { adapter, log } = windowModel(16_000, readingBehaviour(60))
    app.llm.registerAdapter('test', adapter)
    const agent = await app.agentLoop.create({ provider: 'test', model: 'small', maxSteps: 100 })
    const result = await agent.prompt(userText('read sixty files'))
    expect(result.text).toBe('done')
    expect(log.overflows).toBe(0)
    expect(Math.max(...log.requests.map((r) => r.tokens))).toBeLessThanOrEqual(16_000)
    const events = agent.session.events.slice()
    const starts = events.filter((event) => event.type === 'compaction/start')
    const ends = events.filter((event) => event.type === 'compaction/end')
    expect(starts.length).toBeGreaterThan(2)
    expect(ends.map((event) => event.type === 'compaction/end' && event.data.outcome)).toEqual(
      starts.map(() => 'completed'),
    )
    expect(checkSessionLog(events)).toEqual([])
    expect(app.compaction.pressure(agent).ratio).toBeLessThan(0.8)
  })
})
