/**
 * Scenario 9, listing sessions: `ctx.sessions.list()` over a directory of 10,000 JSONL session files
 * (a header and one short turn each, as `JsonlStorage` writes them), in fresh processes, interleaved
 * with the floor: bare `readdir`, then `openSync` + one 4 KB `readSync` + `fstatSync` + `closeSync` +
 * `JSON.parse` of the first line per file, one file after another on the main thread (the cheapest
 * way found: the same calls on libuv's pool, 16 files at a time, took 0.7–0.9 s where these take
 * ~0.18 s). Reports the first call's wall time in each process (what an app pays once at start-up)
 * against the 1 s, and its ratio to the floor.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median } from '../stats.ts'

/** What one listing child reports. */
export interface ListResult {
  readonly sessions: number
  readonly problems: number
  /** The first `list()` call of the process, in seconds. */
  readonly first: number
  /** A second call right after (warm code), in seconds. */
  readonly second: number
}

/** Child side: writes `count` session files into `dir` (header, then a user message and one turn). */
export async function writeSessionFiles(dir: string, count: number): Promise<{ readonly files: number }> {
  await mkdir(dir, { recursive: true })
  const time = 1_796_000_000_000
  const batch: Promise<void>[] = []
  for (let i = 0; i < count; i++) {
    const sessionId = `list-${String(i).padStart(6, '0')}`
    const lines = [
      { format: 'dsh-session', version: 1, sessionId, createdAt: time + ((i * 7919) % count) },
      {
        type: 'user/message',
        seq: 0,
        time,
        data: {
          id: `u-${i}`,
          role: 'user',
          content: [{ type: 'text', text: 'hi' }],
          source: { kind: 'user' },
        },
        surface: { op: 'append' },
      },
      { type: 'turn/start', seq: 1, time, data: { turn: 1, trigger: { kind: 'send', target: 'next-turn' } } },
      { type: 'turn/end', seq: 2, time, data: { turn: 1, reason: { kind: 'completed' } } },
    ]
    const text = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`
    batch.push(writeFile(join(dir, `${sessionId}.jsonl`), text, { mode: 0o600 }))
    if (batch.length >= 64) await Promise.all(batch.splice(0))
  }
  await Promise.all(batch)
  return { files: count }
}

/** Child side: times `ctx.sessions.list()` over `JsonlStorage` in `dir`, twice. */
export async function measureList(dir: string): Promise<ListResult> {
  const { Context } = await import('cordis')
  const { LlmRuntime } = await import('dsh-llm')
  const { JsonlStorage, Sessions } = await import('dsh-session')
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, { storage: new JsonlStorage({ dir }) })
  let started = performance.now()
  const listing = await app.sessions.list()
  const first = (performance.now() - started) / 1000
  started = performance.now()
  await app.sessions.list()
  const second = (performance.now() - started) / 1000
  return { sessions: listing.sessions.length, problems: listing.problems.length, first, second }
}

/** Child side: the floor, bare header reads of every `.jsonl` file in `dir` (see the module comment). */
export async function measureListFloor(dir: string): Promise<ListResult> {
  const once = async () => {
    const names = (await readdir(dir)).filter((name) => name.endsWith('.jsonl'))
    const headers: unknown[] = []
    const buffer = Buffer.allocUnsafe(4096)
    for (const name of names) {
      const fd = openSync(join(dir, name), 'r')
      const read = readSync(fd, buffer, 0, 4096, 0)
      fstatSync(fd)
      closeSync(fd)
      headers.push(JSON.parse(buffer.toString('utf8', 0, buffer.subarray(0, read).indexOf(10))))
    }
    return headers.length
  }
  let started = performance.now()
  const sessions = await once()
  const first = (performance.now() - started) / 1000
  started = performance.now()
  await once()
  const second = (performance.now() - started) / 1000
  return { sessions, problems: 0, first, second }
}

/** Parent side: writes `count` session files once, then lists them in `runs` fresh processes. */
export async function listScenario(
  count: number,
  runs: number,
  dir: string,
  log: (message: string) => void,
): Promise<Row[]> {
  const sessions = join(dir, 'sessions')
  await runInChild({ kind: 'list-generate', dir: sessions, count })
  const results: ListResult[] = []
  const floors: ListResult[] = []
  for (let r = 0; r < runs; r++) {
    for (const impl of ['raw', 'dsh'] as const) {
      const result = await runInChild({ kind: 'list', impl, dir: sessions })
      if (result.sessions !== count || result.problems !== 0) {
        throw new Error(
          `list ${impl}: ${result.sessions} sessions and ${result.problems} problems, ${count} expected`,
        )
      }
      log(
        `list ${impl}: ${count} sessions, first call ${result.first.toFixed(3)} s, second ${result.second.toFixed(3)} s`,
      )
      ;(impl === 'dsh' ? results : floors).push(result)
    }
  }
  const label = count.toLocaleString('en-US')
  return [
    row({
      id: 'list-first',
      scenario: '9 listing sessions',
      metric: `sessions.list() over ${label} JSONL sessions, first call, s (runs: ${results.map((r) => r.first.toFixed(2)).join(', ')})`,
      dsh: median(results.map((r) => r.first)),
      baselineName: '1 s',
      baseline: 1,
      target: '≤ 1 s',
      check: (_ratio, dsh) => dsh <= 1,
    }),
    row({
      id: 'list-floor',
      scenario: '9 listing sessions',
      metric: `sessions.list() over ${label} JSONL sessions, first call, s`,
      dsh: median(results.map((r) => r.first)),
      baselineName: 'floor',
      baseline: median(floors.map((r) => r.first)),
      runs: { dsh: results.map((r) => r.first), baseline: floors.map((r) => r.first) },
    }),
    row({
      id: 'list-second',
      scenario: '9 listing sessions',
      metric: `sessions.list() over ${label} JSONL sessions, second call, s`,
      dsh: median(results.map((r) => r.second)),
      baselineName: 'floor',
      baseline: median(floors.map((r) => r.second)),
      runs: { dsh: results.map((r) => r.second), baseline: floors.map((r) => r.second) },
    }),
  ]
}
