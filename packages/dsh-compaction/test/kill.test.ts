/**
 * SIGKILL during a compaction: in the summarizing call, and once each of the compaction's appends is
 * durable. After reopening, the session loads and its surface is the one before the compaction or
 * the one after it, never a mix. The child runs the built packages (`pnpm test` builds first).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from 'cordis'
// Importing the package defines the compaction/* events (and their repair) in this process.
import 'dsh-compaction'
import { checkSessionLog } from 'dsh-invariants'
import { SessionId } from 'dsh-llm'
import { foldMessages, JsonlStorage, type SessionEvent, Sessions } from 'dsh-session'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

const child = fileURLToPath(new URL('./fixtures/kill-child.mjs', import.meta.url))
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Runs the child; resolves with its exit signal and what it printed. */
function run(
  strategy: string,
  point: string,
): Promise<{ dir: string; signal: string | null; out: string; err: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-compaction-kill-'))
  dirs.push(dir)
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, dir, strategy, point], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    proc.stdout.on('data', (part: Buffer) => {
      out += part.toString()
    })
    proc.stderr.on('data', (part: Buffer) => {
      err += part.toString()
    })
    proc.on('error', reject)
    proc.on('close', (_code, signal) => resolve({ dir, signal, out, err }))
  })
}

/** Opens the one session in `dir` (repairing it) and returns its events. */
async function reopen(dir: string): Promise<readonly SessionEvent[]> {
  const app = new Context()
  await app.plugin(Sessions, { storage: new JsonlStorage({ dir }) })
  const [file] = readdirSync(dir).filter((name) => name.endsWith('.jsonl'))
  const session = await app.sessions.open(SessionId(String(file).replace(/\.jsonl$/, '')))
  const events = session.events.slice()
  expect(session.deriveMessages()).toEqual(foldMessages(events))
  await app.sessions.close(session)
  return events
}

/** `pre` when the compaction was rolled back, `post` when it completed (and checks which it is). */
function surfaceState(events: readonly SessionEvent[]): 'pre' | 'post' {
  const start = events.findIndex((event) => event.type === 'compaction/start')
  const end = events.findIndex((event) => event.type === 'compaction/end')
  const startEvent = events[start]
  const endEvent = events[end]
  if (startEvent?.type !== 'compaction/start' || endEvent?.type !== 'compaction/end') {
    throw new Error('no closed compaction in the log')
  }
  const pre = foldMessages(events.slice(0, start))
  const surface = foldMessages(events)
  const written = events
    .slice(start + 1, end)
    .filter(
      (event) =>
        event.surface?.op === 'replace' &&
        event.type === 'user/message' &&
        event.data.id.startsWith(`${startEvent.data.id}:`),
    )
  if (endEvent.data.outcome === 'interrupted') {
    expect(surface).toEqual(pre)
    return 'pre'
  }
  expect(endEvent.data.outcome).toBe('completed')
  expect(written).toHaveLength(startEvent.data.replaces)
  expect(surface).toEqual(foldMessages(events.slice(0, end + 1)))
  expect(surface).not.toEqual(pre)
  return 'post'
}

/** The compaction events each strategy appends in the child's scenario (start, replaces, end). */
const TOTAL = { prune: 2 + 6, summarize: 3 } as const

for (const strategy of ['prune', 'summarize'] as const) {
  const total = TOTAL[strategy]
  const points = [
    ...(strategy === 'summarize' ? ['summary-call'] : []),
    ...Array.from({ length: total }, (_, i) => `after-${i + 1}`),
  ]
  describe(`SIGKILL during a ${strategy} compaction`, () => {
    // Every child runs at once (each in its own directory); the tests below read their outcomes.
    const outcomes = new Map<string, ReturnType<typeof run>>()
    const outcome = (point: string) => {
      let pending = outcomes.get(point)
      if (pending === undefined) {
        pending = run(strategy, point)
        outcomes.set(point, pending)
      }
      return pending
    }
    beforeAll(() => {
      for (const point of ['none', ...points]) void outcome(point)
    })

    test(`without a kill it completes with ${total} compaction events`, { timeout: 120_000 }, async () => {
      const clean = await outcome('none')
      expect(clean.err).toBe('')
      expect(JSON.parse(clean.out)).toMatchObject({ compactionEvents: total, result: 'completed' })
    })

    test.each(points)(
      'killed at %s: the surface is the one before or after, never a mix',
      { timeout: 120_000 },
      async (point) => {
        const killed = await outcome(point)
        expect({ signal: killed.signal, err: killed.err }).toEqual({ signal: 'SIGKILL', err: '' })
        const events = await reopen(killed.dir)
        expect(checkSessionLog(events)).toEqual([])
        // Rolled back until every replace is durable; from then on, the compaction stands.
        const n = point === 'summary-call' ? 0 : Number(point.slice('after-'.length))
        expect(surfaceState(events)).toBe(n >= total - 1 ? 'post' : 'pre')
      },
    )
  })
}
