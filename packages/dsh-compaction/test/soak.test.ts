/**
 * The long run: an agent reading large files for 2,000 steps (`DSH_COMPACTION_SOAK=1`; 300 in the
 * default run) in a 16k-token window, over JSONL. No request may exceed the window, the log must pass
 * every invariant, reload, and pass the offline `dsh-invariants check` CLI (the built one, as
 * `pnpm test` builds first) as a user runs it: the compaction events are in dsh-session's catalog, so
 * the CLI reads the file without loading dsh-compaction.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkSessionLog } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { userText } from 'dsh-llm'
import { textResponse, toolCallsResponse } from 'dsh-llm/testing'
import { JsonlStorage } from 'dsh-session'
import { afterAll, expect, test } from 'vitest'
import { type Behaviour, compactingApp, modelTokens, windowModel } from './support.ts'

installInvariantGuard()

const STEPS = process.env.DSH_COMPACTION_SOAK === '1' ? 2000 : 300
const STEPS_PER_TURN = 50
const WINDOW = 16_000
const packages = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'dsh-compaction-soak-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Size of file `n`'s text: mostly 2-9k characters, every fifth 16k (over the prune threshold). */
function sizeOf(n: number): number {
  return n % 5 === 0 ? 16_000 : 2_000 + ((n * 7919) % 7_000)
}

/** Each turn: 49 steps reading one file (two in parallel every seventh), then `done`. */
const behaviour: Behaviour = (_request, n) => {
  if (n % STEPS_PER_TURN === STEPS_PER_TURN - 1) return textResponse(`done ${n}`)
  const call = (k: number) => ({ id: `call-${n}-${k}`, name: 'read', args: { path: `file-${n}-${k}` } })
  return toolCallsResponse(n % 7 === 3 ? [call(0), call(1)] : [call(0)])
}

test(`${STEPS} steps with large tool results in a ${WINDOW}-token window`, { timeout: 600_000 }, async () => {
  const app = await compactingApp({
    sessions: { storage: new JsonlStorage({ dir }) },
    compaction: { contextWindows: { small: WINDOW } },
    resultChars: (path) => sizeOf(Number(path.split('-')[1])),
  })
  const { adapter, log } = windowModel(WINDOW, behaviour)
  app.llm.registerAdapter('test', adapter)
  const agent = await app.agentLoop.create({ provider: 'test', model: 'small', maxSteps: STEPS_PER_TURN })
  for (let turn = 0; turn < STEPS / STEPS_PER_TURN; turn++) {
    const result = await agent.prompt(userText(`turn ${turn}: read the next files`))
    expect(result.stopReason).toEqual({ kind: 'completed' })
  }
  const loopRequests = log.requests.filter((entry) => !entry.summary)
  expect(loopRequests.length).toBe(STEPS)
  expect(log.overflows).toBe(0)
  const largest = Math.max(...log.requests.map((entry) => modelTokens(entry.request)))
  expect(largest).toBeLessThanOrEqual(WINDOW)

  const events = agent.session.events.slice()
  const ends = events.flatMap((event) => (event.type === 'compaction/end' ? [event.data] : []))
  const starts = events.flatMap((event) => (event.type === 'compaction/start' ? [event.data] : []))
  expect(ends.length).toBe(starts.length)
  expect(starts.length).toBeGreaterThanOrEqual(STEPS / 40)
  expect(new Set(starts.map((start) => start.strategy))).toEqual(new Set(['prune', 'summarize']))
  expect(ends.every((end) => end.outcome === 'completed')).toBe(true)
  expect(checkSessionLog(events)).toEqual([])

  const id = agent.session.id
  const surface = agent.session.deriveMessages()
  await agent.dispose()
  const again = await compactingApp({ sessions: { storage: new JsonlStorage({ dir }) } })
  const reopened = await again.sessions.open(id)
  expect(reopened.seq).toBe(events.length)
  expect(reopened.deriveMessages()).toEqual(surface)
  await again.sessions.close(reopened)

  const cli = spawnSync(
    process.execPath,
    [join(packages, 'dsh-invariants', 'dist', 'cli.js'), 'check', join(dir, `${id}.jsonl`)],
    { encoding: 'utf8' },
  )
  expect(cli.stderr).toBe('')
  expect(cli.stdout).toContain(', 0 violations')
  expect(cli.status).toBe(0)
})
