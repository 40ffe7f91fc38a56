/**
 * Scenario 4, storage: append events to a JSONL session file in durable batches (one write and one
 * fdatasync per batch) through dsh's `JsonlStorage`, against the same bytes written and synced
 * with bare `FileHandle` calls; then cold-load the file (fresh process) through `JsonlStorage.load`
 * (parse, validate, freeze, keep) against a bare 64 KB reader that splits lines and `JSON.parse`s
 * each, keeping the values.
 */
import { type FileHandle, open, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import { SessionId } from 'dsh-llm'
import { JsonlStorage, SESSION_FORMAT_VERSION, type SessionEvent } from 'dsh-session'
import { type Row, row } from '../report.ts'
import { runInChild } from '../spawn.ts'
import { median } from '../stats.ts'
import { benchHeader, toolLoopEvents } from './session-events.ts'

/** What an append run reports. */
export interface AppendResult {
  readonly eventsPerSec: number
  readonly bytes: number
}

/** What a load run reports. */
export interface LoadResult {
  readonly mbPerSec: number
  readonly events: number
}

const SESSION = 'bench-append'

function fileIn(dir: string): string {
  return join(dir, `${SESSION}.jsonl`)
}

/** Child side: appends `count` events in batches of `batch`, durable per batch; times the appends. */
export async function measureAppend(
  impl: 'dsh' | 'raw',
  count: number,
  batch: number,
  dir: string,
): Promise<AppendResult> {
  const events = toolLoopEvents(count)
  const file = fileIn(dir)
  await rm(file, { force: true })
  const elapsed = impl === 'dsh' ? await appendDsh(events, batch, dir) : await appendRaw(events, batch, file)
  return { eventsPerSec: count / (elapsed / 1000), bytes: (await stat(file)).size }
}

async function appendDsh(events: readonly SessionEvent[], batch: number, dir: string): Promise<number> {
  const storage = new JsonlStorage({ dir })
  const id = SessionId(SESSION)
  await storage.create(benchHeader(id))
  const started = performance.now()
  for (let i = 0; i < events.length; i += batch) {
    await storage.appendBatch(id, events.slice(i, i + batch), i)
  }
  const elapsed = performance.now() - started
  await storage.release(id)
  return elapsed
}

async function appendRaw(events: readonly SessionEvent[], batch: number, file: string): Promise<number> {
  const handle = await open(file, 'a')
  const header = { format: 'dsh-session', version: SESSION_FORMAT_VERSION, sessionId: SESSION, createdAt: 0 }
  await handle.write(`${JSON.stringify(header)}\n`)
  await handle.datasync()
  const started = performance.now()
  for (let i = 0; i < events.length; i += batch) {
    const end = Math.min(events.length, i + batch)
    const lines: string[] = []
    for (let j = i; j < end; j++) lines.push(JSON.stringify(events[j]))
    lines.push('')
    await handle.write(Buffer.from(lines.join('\n'), 'utf8'))
    await handle.datasync()
  }
  const elapsed = performance.now() - started
  await handle.close()
  return elapsed
}

/** Child side: loads the file an append run wrote; times the whole load. */
export async function measureLoad(impl: 'dsh' | 'raw', dir: string): Promise<LoadResult> {
  const file = fileIn(dir)
  const bytes = (await stat(file)).size
  const started = performance.now()
  const events =
    impl === 'dsh'
      ? (await new JsonlStorage({ dir }).load(SessionId(SESSION))).events.length
      : await loadRaw(file)
  const elapsed = performance.now() - started
  return { mbPerSec: bytes / 1e6 / (elapsed / 1000), events }
}

async function loadRaw(file: string): Promise<number> {
  const handle: FileHandle = await open(file, 'r')
  const buffer = Buffer.allocUnsafe(64 * 1024)
  const decoder = new StringDecoder('utf8')
  const kept: unknown[] = []
  let carry = ''
  let line = 0
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
      if (bytesRead === 0) break
      const text = carry + decoder.write(buffer.subarray(0, bytesRead))
      let start = 0
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const value: unknown = JSON.parse(text.slice(start, nl))
        if (line++ > 0) kept.push(value)
        start = nl + 1
      }
      carry = text.slice(start)
    }
  } finally {
    await handle.close()
  }
  return kept.length
}

/** Parent side: for each batch size, interleaved dsh/raw append runs, then load runs of the file. */
export async function storageScenario(
  events: number,
  batches: readonly number[],
  runs: number,
  dir: string,
): Promise<Row[]> {
  const rows: Row[] = []
  const load = { dsh: [] as number[], raw: [] as number[] }
  for (const batch of batches) {
    const append = { dsh: [] as number[], raw: [] as number[] }
    for (let r = 0; r < runs; r++) {
      append.raw.push(
        (await runInChild({ kind: 'storage-append', impl: 'raw', events, batch, dir })).eventsPerSec,
      )
      append.dsh.push(
        (await runInChild({ kind: 'storage-append', impl: 'dsh', events, batch, dir })).eventsPerSec,
      )
      if (batch === batches[batches.length - 1]) {
        const a = await runInChild({ kind: 'storage-load', impl: 'dsh', dir })
        const b = await runInChild({ kind: 'storage-load', impl: 'raw', dir })
        if (a.events !== events || b.events !== events) {
          throw new Error(`storage load: dsh read ${a.events} events, raw ${b.events}, ${events} written`)
        }
        load.dsh.push(a.mbPerSec)
        load.raw.push(b.mbPerSec)
      }
    }
    rows.push(
      row({
        id: `append-${batch}`,
        scenario: '4 storage',
        metric: `append events/s, ${events.toLocaleString('en-US')} events, fdatasync per ${batch}`,
        dsh: median(append.dsh),
        baselineName: 'raw write+fdatasync',
        baseline: median(append.raw),
      }),
    )
  }
  rows.push(
    row({
      id: 'load',
      scenario: '4 storage',
      metric: 'cold load MB/s (parse, validate, keep)',
      dsh: median(load.dsh),
      baselineName: 'raw JSON.parse',
      baseline: median(load.raw),
      target: '≥ 0.5×',
      check: (ratio) => ratio >= 0.5,
    }),
  )
  return rows
}
