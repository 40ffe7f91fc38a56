import { buildViewData } from 'dsh-viewer'
import { expect, it } from 'vitest'
import { bigSession } from './big-session.ts'

it('a 100k-event session builds clean view data that stays linear in the log size', () => {
  const events = bigSession(400, 240)
  expect(events.length).toBeGreaterThanOrEqual(100_000)
  const data = buildViewData({ file: 'big.jsonl', events })
  expect(data.violations).toEqual([])
  expect(data.requests).toHaveLength(400)
  expect(data.turns).toHaveLength(400)
  // Each request stores only what it added: two messages (the answer before it and the new question).
  expect(
    data.requests.slice(1).every((r) => r.sources.length === 2 && r.diff.kept === r.messageCount - 2),
  ).toBe(true)
  const logBytes = JSON.stringify(events).length
  const viewBytes = JSON.stringify({ ...data, events: [] }).length
  expect(viewBytes).toBeLessThan(logBytes / 4)
})
