/**
 * The streaming reader and file check: any chunk size reads the same events as the whole-file reader,
 * the streamed check finds what the in-memory check finds, and the progress line is drawn only on a
 * terminal for long files.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkSessionFile, checkSessionLog, readRecordedLog, scanRecordedLog } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import type { SessionEvent } from 'dsh-session'
import { JsonlStorage } from 'dsh-session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { progressFor } from '../src/cli/progress.ts'
import { expandRunLinesIn, READ_TURN_SCRIPT, recordReadTurn, scriptedSession } from './scripted.ts'

installInvariantGuard()

let dir: string
let file: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-invariants-scan-'))
  const { app, session, driver } = await scriptedSession(READ_TURN_SCRIPT, 'scanned', {
    sessions: { storage: new JsonlStorage({ dir }) },
  })
  await recordReadTurn(driver)
  await app.sessions.close(session)
  file = join(dir, 'scanned.jsonl')
  // The tests address events by line: one event per line (run-lines.test.ts reads run lines).
  expandRunLinesIn(file)
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

async function scan(path: string, chunkSize: number) {
  const events: SessionEvent[] = []
  const result = await scanRecordedLog(path, { onEvent: (event) => events.push(event) }, { chunkSize })
  return { events, result }
}

describe('scanRecordedLog', () => {
  it('reads the same events as readRecordedLog at every chunk size, lines cut anywhere', async () => {
    const whole = readRecordedLog(file)
    for (const size of [1, 7, 64, 1 << 20]) {
      const { events, result } = await scan(file, size)
      expect(events).toEqual(whole.events)
      expect(result).toEqual({ file, header: whole.header, events: whole.events.length })
    }
  })

  it('treats a final line without newline, or not JSON, as torn, and a bad middle line as corrupt', async () => {
    const text = readFileSync(file, 'utf8')
    const torn = join(dir, 'torn.jsonl')
    writeFileSync(torn, `${text}{"type":"user/mess`)
    expect((await scan(torn, 5)).result.tornLine).toBe(26)
    writeFileSync(torn, `${text}{"type":"user/mess\n`)
    expect((await scan(torn, 5)).result.tornLine).toBe(26)
    writeFileSync(torn, `${text}{"type":"user/mess\n{}\n`)
    await expect(scan(torn, 5)).rejects.toMatchObject({
      code: 'CORRUPT_LOG',
      message: `${torn}:26: the line is not valid JSON`,
    })
  })
})

describe('checkSessionFile', () => {
  it('finds what checkSessionLog finds, with line and event type, and counts events, turns and requests', async () => {
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
    const edited = lines.map((line, i) => (i === 14 ? line.replace('"c1"', '"c9"') : line))
    const bad = join(dir, 'bad.jsonl')
    writeFileSync(bad, `${edited.join('\n')}\n`)
    const offline = checkSessionLog(readRecordedLog(bad).events, { parent: null })
    const checked = await checkSessionFile(bad, { chunkSize: 13 })
    expect(offline.length).toBeGreaterThan(0)
    expect(checked.violations.map(({ line, eventType, ...violation }) => violation)).toEqual(offline)
    expect(checked.violations.map((v) => [v.line, v.eventType])).toEqual(
      offline.map((v) => [(v.index ?? 0) + 2, readRecordedLog(bad).events[v.index ?? 0]?.type]),
    )
    expect(await checkSessionFile(file)).toEqual({
      file,
      sessionId: 'scanned',
      events: 24,
      turns: 1,
      requests: 2,
      violations: [],
    })
  })
})

describe('the progress line', () => {
  it('is drawn only on a terminal, for files of 16 MiB or more, and erased at the end', () => {
    const written: string[] = []
    const tty = { isTTY: true, write: (text: string) => written.push(text) }
    expect(progressFor('f.jsonl', { isTTY: false, write: () => undefined })).toBeUndefined()
    const small = progressFor('f.jsonl', tty)
    small?.onProgress(1 << 20, 2 << 20)
    small?.clear()
    expect(written).toEqual([])
    const large = progressFor('f.jsonl', tty)
    large?.onProgress(8 << 20, 32 << 20)
    large?.onProgress(9 << 20, 32 << 20)
    large?.onProgress(32 << 20, 32 << 20)
    large?.clear()
    expect(written).toEqual([
      '\r\x1b[Kf.jsonl: 25% (8 of 32 MiB)',
      '\r\x1b[Kf.jsonl: 100% (32 of 32 MiB)',
      '\r\x1b[K',
    ])
  })
})
