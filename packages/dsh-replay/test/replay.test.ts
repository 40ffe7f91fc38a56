import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setIdSource } from 'dsh-llm'
import { scriptedAdapter } from 'dsh-llm/testing'
import { ReplayErrorCode, ReplayMissError, recordReplay } from 'dsh-replay'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { runSession, SCRIPT } from './session.ts'

// Every id dsh mints (assistant and tool-result message ids among them) comes from a counter reset
// before each run, so the runs write the same bytes.
let minted = 0
beforeEach(() => {
  minted = 0
  setIdSource(() => `id${++minted}`)
})
afterEach(() => setIdSource(undefined))

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'dsh-replay-'))
}

it('replaying a recorded two-turn session with parallel tools writes a byte-identical log every run', async () => {
  const dir = await tempDir()
  const fixture = join(dir, 'fixtures', 'session.json')
  const model = scriptedAdapter(SCRIPT)
  const recorded = await runSession(
    recordReplay({ fixture, adapter: model, mode: 'record' }),
    join(dir, 'rec'),
  )
  expect(model.callCount).toBe(4)

  const runs: string[] = []
  for (const name of ['replay1', 'replay2']) {
    minted = 0
    const replay = recordReplay({ fixture, mode: 'replay' })
    runs.push(await runSession(replay, join(dir, name)))
    expect(replay.misses).toEqual([])
  }
  expect(runs[0]).toBe(recorded)
  expect(runs[1]).toBe(recorded)
  expect(recorded).toContain('"text":"a.txt says alpha, b.txt says beta."')
  expect(recorded).toContain('"text":"2 + 3 = 5"')

  const file = JSON.parse(await readFile(fixture, 'utf8')) as { format: string; exchanges: { key: string }[] }
  expect(file.format).toBe('dsh-replay/1')
  expect(file.exchanges).toHaveLength(4)
  expect(new Set(file.exchanges.map((e) => e.key)).size).toBe(4)
})

it('a changed prompt misses in replay: the turn ends with error code REPLAY_MISS and the model is never called', async () => {
  const dir = await tempDir()
  const fixture = join(dir, 'session.json')
  await runSession(
    recordReplay({ fixture, adapter: scriptedAdapter(SCRIPT), mode: 'record' }),
    join(dir, 'rec'),
  )
  const replay = recordReplay({ fixture, mode: 'replay' })
  const log = await runSession(replay, join(dir, 'miss'), 'What does c.txt say?')
  const ends = log
    .split('\n')
    .filter((line) => line.includes('"turn/end"'))
    .map((line) => JSON.parse(line).data.reason)
  expect(replay.misses).toHaveLength(2)
  expect(replay.misses[0]?.code).toBe(ReplayErrorCode.REPLAY_MISS)
  expect(replay.misses[0]?.nearest?.index).toBe(0)
  expect(ends[0]).toEqual({
    kind: 'error',
    failure: { code: 'REPLAY_MISS', message: replay.misses[0]?.message },
  })
  expect(replay.misses[0]).toBeInstanceOf(ReplayMissError)
})
