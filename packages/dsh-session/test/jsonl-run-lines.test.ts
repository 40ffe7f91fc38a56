/**
 * JSONL run lines (format version 2): the chunk entries one write carries are one line; loading
 * expands it. A torn final run line is cut like any torn line; a corrupt one is refused naming its
 * line and seq.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SessionId } from 'dsh-llm'
import { JsonlStorage, type Session } from 'dsh-session'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { tempDir } from './fixtures/events.ts'
import { assistant, mountSessions, user } from './support.ts'

let cleanup: (() => void) | undefined
afterEach(() => cleanup?.())

async function writtenSession(): Promise<{ dir: string; file: string; json: string; session: Session }> {
  const { dir, dispose } = tempDir()
  cleanup = dispose
  const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
  const session = await app.sessions.create({ id: SessionId('s1') })
  session.append('user/message', user('u1', 'hi'))
  session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
  session.append('step/start', { turn: 1, step: 1 })
  for (const text of ['a', 'b', 'c']) session.appendChunk(1, 1, { type: 'text-delta', index: 0, text })
  await session.flush()
  for (const text of ['d', 'e']) session.appendChunk(1, 1, { type: 'text-delta', index: 0, text })
  const json = JSON.stringify(session.events)
  await app.sessions.close(session)
  return { dir, file: join(dir, 's1.jsonl'), json, session }
}

describe('JSONL run lines', () => {
  it('writes the chunks of each write as one run line and loads the same events', async () => {
    const { dir, file, json } = await writtenSession()
    const lines = readFileSync(file, 'utf8').split('\n')
    expect(lines.slice(4)).toEqual([
      '{"run":3,"turn":1,"step":1,"times":[1004,1005,1006],"chunks":[{"type":"text-delta","index":0,"text":"a"},{"type":"text-delta","index":0,"text":"b"},{"type":"text-delta","index":0,"text":"c"}]}',
      '{"run":6,"turn":1,"step":1,"times":[1007,1008],"chunks":[{"type":"text-delta","index":0,"text":"d"},{"type":"text-delta","index":0,"text":"e"}]}',
      '',
    ])
    const loaded = await new JsonlStorage({ dir }).load(SessionId('s1'))
    expect(JSON.stringify(loaded.events)).toBe(json)
    expect(loaded.report).toEqual({ repairedEvents: 0 })
  })

  it('writes a run the log sealed before its barrier, as the same bytes, without parsing it back', async () => {
    const { dir, dispose } = tempDir()
    cleanup = dispose
    const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
    const session = await app.sessions.create({ id: SessionId('s1') })
    session.append('user/message', user('u1', 'hi'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    await session.flush()
    // Seqs 3-5: one run the message below seals before the barrier; seq 7 a run of one.
    const parse = vi.spyOn(JSON, 'parse')
    for (const text of ['"q"', 'é\n', '\u2028'])
      session.appendChunk(1, 1, { type: 'text-delta', index: 0, text })
    session.append('assistant/message', {
      turn: 1,
      step: 1,
      message: assistant('a1', [{ type: 'text', text: 'x' }]),
    })
    session.appendChunk(1, 1, { type: 'text-delta', index: 1, text: 'z' })
    session.append('step/end', { turn: 1, step: 1 })
    try {
      await session.flush()
      expect(parse).not.toHaveBeenCalled()
    } finally {
      parse.mockRestore()
    }
    const json = JSON.stringify(session.events)
    await app.sessions.close(session)
    const lines = readFileSync(join(dir, 's1.jsonl'), 'utf8').split('\n')
    const events = JSON.parse(json) as { type: string }[]
    expect(lines[4]).toBe(
      '{"run":3,"turn":1,"step":1,"times":[1004,1005,1006],"chunks":[{"type":"text-delta","index":0,"text":"\\"q\\""},{"type":"text-delta","index":0,"text":"é\\n"},{"type":"text-delta","index":0,"text":"\u2028"}]}',
    )
    expect(lines.slice(5)).toEqual([...events.slice(6).map((event) => JSON.stringify(event)), ''])
    expect(lines[6]).toBe(
      '{"type":"assistant/chunk","seq":7,"time":1008,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":1,"text":"z"}}}',
    )
    const loaded = await new JsonlStorage({ dir }).load(SessionId('s1'))
    expect(JSON.stringify(loaded.events)).toBe(json)
  })

  it('cuts a torn final run line: its chunks were never acknowledged', async () => {
    const { dir, file, json } = await writtenSession()
    const torn = '{"run":8,"turn":1,"step":1,"times":[1009,1010],"chunks":[{"type":"text-de'
    appendFileSync(file, torn)
    const storage = new JsonlStorage({ dir })
    await storage.acquire(SessionId('s1'))
    const loaded = await storage.load(SessionId('s1'))
    expect(JSON.stringify(loaded.events)).toBe(json)
    expect(loaded.report.truncatedTail).toEqual({ line: 7, bytes: Buffer.byteLength(torn) })
    await storage.close()
  })

  it('refuses a corrupt run line before the end naming its line and seq', async () => {
    const { dir, file } = await writtenSession()
    const lines = readFileSync(file, 'utf8').split('\n')
    lines[4] = (lines[4] ?? '').replace('"run":3', '"run":4')
    writeFileSync(file, lines.join('\n'))
    await expect(new JsonlStorage({ dir }).load(SessionId('s1'))).rejects.toMatchObject({
      code: 'CORRUPT_LOG',
      message: `${file}:5: corrupt log at expected seq 3: found seq 4`,
      where: { file, line: 5, seq: 3 },
    })
    lines[4] = (lines[4] ?? '').replace('"times":[1004,', '"times":[')
    writeFileSync(file, lines.join('\n'))
    await expect(new JsonlStorage({ dir }).load(SessionId('s1'))).rejects.toMatchObject({
      code: 'CORRUPT_LOG',
      message: `${file}:5: corrupt log at expected seq 3: invalid run line: a run line needs times and chunks as arrays of one length (at least one)`,
    })
  })

  it('appends event lines only to a version 1 file, so version 1 readers still read it', async () => {
    const { dir, file } = await writtenSession()
    const v1 = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
    // The same log as a version 1 file: its header says 1, its run lines expanded to event lines.
    const loaded = await new JsonlStorage({ dir }).load(SessionId('s1'))
    const lines = [
      v1[0]?.replace('"version":2', '"version":1'),
      ...loaded.events.map((event) => JSON.stringify(event)),
    ]
    writeFileSync(file, `${lines.join('\n')}\n`)
    const app = await mountSessions({ storage: new JsonlStorage({ dir }) })
    const session = await app.sessions.open(SessionId('s1'))
    // Opening closed the interrupted turn 1 (step/end, turn/end); turn 2 streams its chunks.
    session.append('turn/start', { turn: 2, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 2, step: 1 })
    for (const text of ['f', 'g', 'h']) session.appendChunk(2, 1, { type: 'text-delta', index: 0, text })
    const json = JSON.stringify(session.events)
    await app.sessions.close(session)
    const after = readFileSync(file, 'utf8').split('\n')
    expect(after.filter((line) => line.startsWith('{"run":'))).toEqual([])
    expect(after.length).toBe(1 + 8 + 2 + 2 + 3 + 1)
    expect(JSON.stringify((await new JsonlStorage({ dir }).load(SessionId('s1'))).events)).toBe(json)
  })
})
