/**
 * Issue 30 item 2: the JSONL format version 2 stores the chunk entries a write carries as one run
 * line. The offline readers expand them into the same events, and `dsh-invariants check` passes a
 * file of either version.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { checkSessionFile, checkSessionLog, readRecordedLog, scanRecordedLog } from 'dsh-invariants'
import { SessionId } from 'dsh-llm'
import Sessions, { appendInput, JsonlStorage, type SessionEvent } from 'dsh-session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireFreshBuild, run } from './cli-run.ts'

const FIXTURE = new URL('./fixtures/main-2026-12-01.jsonl', import.meta.url).pathname
let dir = ''
let file = ''
let written: SessionEvent[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dsh-run-lines-'))
  const app = new Context()
  await app.plugin(Sessions, { storage: new JsonlStorage({ dir }) })
  const session = await app.sessions.create({ id: SessionId('rewritten') })
  // The version 1 fixture's log appended again by this version: its chunks go out as run lines.
  for (const event of readRecordedLog(FIXTURE).events) appendInput(session, event)
  written = JSON.parse(JSON.stringify(session.events))
  await app.sessions.close(session)
  file = join(dir, 'rewritten.jsonl')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('a version 2 file with run lines', () => {
  it('holds a version 2 header and a run line per run the write carried', () => {
    const lines = readFileSync(file, 'utf8').split('\n')
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ format: 'dsh-session', version: 2 })
    const runs = lines.filter((line) => line.startsWith('{"run":')).map((line) => JSON.parse(line))
    expect(runs.map((run) => [run.run, run.turn, run.step, run.chunks.length])).toEqual([
      [4, 1, 1, 9],
      [18, 1, 2, 4],
    ])
    // The header, one line per event but the 13 chunks, two run lines, and the empty tail after the last newline.
    expect(lines.length).toBe(1 + written.length - 13 + 2 + 1)
  })

  it('reads back the same events, each with the line it stood on, and checks clean', async () => {
    const log = readRecordedLog(file)
    expect(JSON.parse(JSON.stringify(log.events))).toEqual(written)
    expect(log.lines.slice(3, 14)).toEqual([5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7])
    expect(checkSessionLog(log.events, { parent: null })).toEqual([])
    const scanned: SessionEvent[] = []
    const lines: number[] = []
    await scanRecordedLog(
      file,
      {
        onEvent: (event, _index, line) => {
          scanned.push(event)
          lines.push(line)
        },
      },
      { chunkSize: 7 },
    )
    expect(scanned).toEqual(log.events)
    expect(lines).toEqual(log.lines)
    expect((await checkSessionFile(file)).violations).toEqual([])
  })

  it('passes dsh-invariants check, as the version 1 file does', () => {
    requireFreshBuild()
    for (const path of [file, FIXTURE]) {
      const result = run('check', path)
      expect(result.status).toBe(0)
      expect(result.stderr).toBe('')
    }
  })

  it('names the line of a run line whose chunk is invalid, or that is not a well-formed run line', () => {
    const lines = readFileSync(file, 'utf8').split('\n')
    const index = lines.findIndex((line) => line.startsWith('{"run":18'))
    const broken = join(dir, 'broken.jsonl')
    const withLine = (line: string) => {
      const copy = [...lines]
      copy[index] = line
      writeFileSync(broken, copy.join('\n'))
    }
    withLine((lines[index] ?? '').replace('"chunks":[{"type":"', '"chunks":[{"type":7,"was":"'))
    expect(() => readRecordedLog(broken)).toThrow(`${broken}:${index + 1}: invalid event:`)
    withLine((lines[index] ?? '').replace('"times":[', '"times":[1,'))
    expect(() => readRecordedLog(broken)).toThrow(
      `${broken}:${index + 1}: invalid run line: a run line needs times and chunks as arrays of one length (at least one)`,
    )
  })
})
