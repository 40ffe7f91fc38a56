/**
 * Chunk runs (DESIGN §3): a chunk append writes into its step's open run and returns its seq; no
 * event is built until something reads one; live chunk observers use `onChunk` / `session/chunk`,
 * and `session/event` carries no chunks.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { CallId, type StreamChunk } from 'dsh-llm'
import {
  type AppendGuard,
  JsonlStorage,
  type ProjectionDefinition,
  type Session,
  type SessionEvent,
  Sessions,
} from 'dsh-session'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { chunkEventsBuilt } from '../src/chunk-runs.ts'
import { assistant, mountSessions, refusal, user } from './support.ts'

const CHUNKS: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'he' },
  { type: 'text-delta', index: 0, text: 'llo' },
  { type: 'block-end', index: 0, block: { type: 'text', text: 'hello' } },
  { type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } },
  { type: 'finish', reason: { kind: 'stop' } },
]

function openStep(session: Session): void {
  session.append('user/message', user('u1', 'hi'))
  session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
  session.append('step/start', { turn: 1, step: 1 })
}

function closeStep(session: Session): void {
  session.append('assistant/message', {
    turn: 1,
    step: 1,
    message: assistant('a1', [{ type: 'text', text: 'hello' }]),
  })
  session.append('step/end', { turn: 1, step: 1 })
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
}

/** The events a session built the old way (every chunk through `append`) holds, as JSON. */
async function appendedThroughAppend(): Promise<string> {
  const app = await mountSessions()
  const session = await app.sessions.create()
  openStep(session)
  for (const chunk of CHUNKS) session.append('assistant/chunk', { turn: 1, step: 1, chunk })
  closeStep(session)
  return JSON.stringify(session.events)
}

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

describe('chunk runs', () => {
  test('appendChunk returns each seq; the log reads back exactly what append would have committed', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    openStep(session)
    const seqs = CHUNKS.map((chunk) => session.appendChunk(1, 1, chunk))
    expect(seqs).toEqual([3, 4, 5, 6, 7, 8])
    expect(JSON.stringify(session.events)).toBe(JSON.stringify(JSON.parse(JSON.stringify(session.events))))
    closeStep(session)
    expect(JSON.stringify(session.events)).toBe(await appendedThroughAppend())
    expect(structuredClone(session.events)).toEqual(JSON.parse(await appendedThroughAppend()))
    expect(Object.keys(session.events[4] as object)).toEqual(['type', 'seq', 'time', 'data'])
    expect(session.eventAt(4)).toEqual({
      type: 'assistant/chunk',
      seq: 4,
      time: 1005,
      data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'he' } },
    })
    expect(Object.isFrozen(session.eventAt(4))).toBe(true)
    for (const seq of [-1, 3.5, Number.NaN, session.seq, session.seq + 1]) {
      expect(session.eventAt(seq)).toBeUndefined()
      expect(session.eventTypeAt(seq)).toBeUndefined()
    }
    // Lookups in any order find the same events a scan does.
    const events = session.events
    for (const seq of [9, 0, 5, 4, 12, 3, 8, 1]) expect(session.eventAt(seq)).toEqual(events[seq])
    expect(Object.isFrozen(session.eventAt(4)?.data)).toBe(true)
  })

  test('no chunk event is built on the append path, over memory and over JSONL; reading builds them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-chunk-runs-'))
    dirs.push(dir)
    for (const storage of [undefined, new JsonlStorage({ dir })]) {
      const app = await mountSessions(storage === undefined ? {} : { storage })
      const heard: number[] = []
      app.sessions.onChunk((_session, seq) => heard.push(seq))
      const session = await app.sessions.create()
      openStep(session)
      const before = chunkEventsBuilt.count
      for (let i = 0; i < 50; i++) session.appendChunk(1, 1, { type: 'text-delta', index: 0, text: `t${i}` })
      await session.flush()
      expect(chunkEventsBuilt.count - before).toBe(0)
      expect(heard).toHaveLength(50)
      expect(session.eventAt(10)?.data).toEqual({
        turn: 1,
        step: 1,
        chunk: { type: 'text-delta', index: 0, text: 't7' },
      })
      expect(chunkEventsBuilt.count - before).toBe(1)
      await app.sessions.close(session)
    }
  })

  test('the live channel delivers every chunk in order with its seq, time, turn and step; session/event none', async () => {
    const app = await mountSessions()
    const viaOnChunk: unknown[] = []
    const viaCordis: unknown[] = []
    const viaEvents: string[] = []
    app.sessions.onChunk((_session, seq, time, turn, step, chunk) =>
      viaOnChunk.push([seq, time, turn, step, chunk]),
    )
    app.on('session/chunk', (_session, seq, time, turn, step, chunk) =>
      viaCordis.push([seq, time, turn, step, chunk]),
    )
    app.on('session/event', (_session, event) => viaEvents.push(event.type))
    app.sessions.onEvent((_session, event) => viaEvents.push(`onEvent ${event.type}`))
    const session = await app.sessions.create()
    openStep(session)
    session.appendChunk(1, 1, CHUNKS[0] as StreamChunk)
    session.append('assistant/chunk', { turn: 1, step: 1, chunk: CHUNKS[1] as StreamChunk })
    const expected = [
      [3, 1004, 1, 1, CHUNKS[0]],
      [4, 1005, 1, 1, CHUNKS[1]],
    ]
    expect(viaOnChunk).toEqual(expected)
    expect(viaCordis).toEqual(expected)
    expect(viaEvents.filter((type) => type.endsWith('assistant/chunk'))).toEqual([])
    expect(viaEvents).toEqual([
      'user/message',
      'onEvent user/message',
      'turn/start',
      'onEvent turn/start',
      'step/start',
      'onEvent step/start',
    ])
  })

  test('a guard with a chunk hook gets the chunk without an event; one without gets the built candidate', async () => {
    const app = await mountSessions()
    const hooked: unknown[] = []
    const candidates: SessionEvent[] = []
    const withHook: AppendGuard = Object.assign(() => undefined, {
      chunk: (_session: Session, seq: number, turn: number, step: number, chunk: StreamChunk) => {
        hooked.push([seq, turn, step, chunk])
        if (chunk.type === 'text-delta' && chunk.text === 'no') throw new Error('refused by the hook')
      },
    })
    app.sessions.guard(withHook)
    const session = await app.sessions.create()
    openStep(session)
    const plain: AppendGuard = (_session, candidate) => {
      if (candidate.type === 'assistant/chunk') candidates.push(candidate)
    }
    const dispose = app.sessions.guard(plain)
    session.appendChunk(1, 1, CHUNKS[1] as StreamChunk)
    dispose()
    expect(hooked).toEqual([[3, 1, 1, CHUNKS[1]]])
    expect(candidates).toEqual([session.eventAt(3)])
    expect(() => session.appendChunk(1, 1, { type: 'text-delta', index: 0, text: 'no' })).toThrow(
      'refused by the hook',
    )
    expect(session.seq).toBe(4)
  })

  test('appendChunk refuses what append refuses, with the same errors, and commits nothing', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    openStep(session)
    const bad = { type: 'text-delta', index: 0, text: 1 } as unknown as StreamChunk
    const viaAppend = refusal(() => session.append('assistant/chunk', { turn: 1, step: 1, chunk: bad }))
    expect(refusal(() => session.appendChunk(1, 1, bad))).toEqual(viaAppend)
    const wrongStep = refusal(() => session.appendChunk(1, 2, CHUNKS[1] as StreamChunk))
    expect(wrongStep.code).toBe('ENCLOSURE')
    expect(wrongStep).toEqual(
      refusal(() => session.append('assistant/chunk', { turn: 1, step: 2, chunk: CHUNKS[1] as StreamChunk })),
    )
    expect(session.seq).toBe(3)
  })

  test('appending from inside a chunk notification names session/chunk', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    openStep(session)
    let caught: { code: string; message: string } | undefined
    app.sessions.onChunk((live) => {
      caught = refusal(() => live.append('step/end', { turn: 1, step: 1 }))
    })
    session.appendChunk(1, 1, CHUNKS[1] as StreamChunk)
    expect(caught).toEqual({
      code: 'REENTRANT_APPEND',
      message: `session ${session.id}: cannot append step/end from inside the session/chunk notification of assistant/chunk at seq 3`,
    })
  })

  test('a reopened and a forked session read the same events back', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    openStep(session)
    for (const chunk of CHUNKS) session.appendChunk(1, 1, chunk)
    closeStep(session)
    const json = JSON.stringify(session.events)
    const child = await app.sessions.fork(session, session.seq)
    expect(JSON.stringify(child.events.slice(0, session.seq))).toBe(json)
    await app.sessions.close(session)
    const reopened = await app.sessions.open(session.id)
    expect(JSON.stringify(reopened.events)).toBe(json)
  })

  test("a chunk's time is the caller's clock reading under the default clock, and the clock's otherwise", async () => {
    const defaultClock = new Context()
    await defaultClock.plugin(Sessions)
    const live = await defaultClock.sessions.create()
    openStep(live)
    const before = Date.now()
    live.appendChunk(1, 1, CHUNKS[0] as StreamChunk, 1_234)
    // Not a safe integer: ignored, the clock is read.
    live.appendChunk(1, 1, CHUNKS[1] as StreamChunk, 1.5)
    live.appendChunk(1, 1, CHUNKS[2] as StreamChunk)
    const times = live.events.slice(3).map((event) => event.time)
    expect(times[0]).toBe(1_234)
    expect(times[1]).toBeGreaterThanOrEqual(before)
    expect(times[2]).toBeGreaterThanOrEqual(before)

    // A configured clock (here 1000, 1001, ... from the session header on) is always the one read.
    const app = await mountSessions()
    const session = await app.sessions.create()
    openStep(session)
    session.appendChunk(1, 1, CHUNKS[0] as StreamChunk, 1_234)
    expect(session.events.slice(3).map((event) => event.time)).toEqual([1004])
  })

  test('a chunk is frozen wherever it is seen: a guard hook, a listener, a read of the open run', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    openStep(session)
    // Nothing observes the first chunk while it is appended; a read of the open run hands it out.
    session.appendChunk(1, 1, CHUNKS[0] as StreamChunk)
    const read = session.eventAt(3) as SessionEvent & { data: { chunk: StreamChunk } }
    expect(Object.isFrozen(read.data.chunk)).toBe(true)
    const listed = session.events[3] as SessionEvent & { data: { chunk: StreamChunk } }
    expect(Object.isFrozen(listed.data)).toBe(true)
    expect(Object.isFrozen(listed.data.chunk)).toBe(true)
    const seen: boolean[] = []
    const disposeListener = app.sessions.onChunk((_live, _seq, _time, _turn, _step, chunk) => {
      seen.push(Object.isFrozen(chunk))
    })
    session.appendChunk(1, 1, CHUNKS[1] as StreamChunk)
    disposeListener()
    const hooked: AppendGuard = Object.assign(() => undefined, {
      chunk: (_live: Session, _seq: number, _turn: number, _step: number, chunk: StreamChunk) => {
        seen.push(Object.isFrozen(chunk))
      },
    })
    const disposeGuard = app.sessions.guard(hooked)
    session.appendChunk(1, 1, {
      type: 'tool-call-delta',
      index: 1,
      id: CallId('c1'),
      argumentsDelta: '{',
    })
    disposeGuard()
    expect(seen).toEqual([true, true])
    // The input is never frozen: the session keeps a copy.
    const input: StreamChunk = { type: 'text-delta', index: 0, text: 'x' }
    session.appendChunk(1, 1, input)
    expect(Object.isFrozen(input)).toBe(false)
    for (const event of session.events.slice(3)) {
      expect(Object.isFrozen((event.data as { chunk: StreamChunk }).chunk)).toBe(true)
    }
  })
})

describe('passing over chunk entries', () => {
  /** Two steps of chunk runs in `session`: seqs 3–8 and 13–18 are chunk entries. */
  function twoSteps(session: Session): void {
    openStep(session)
    for (const chunk of CHUNKS) session.appendChunk(1, 1, chunk)
    session.append('assistant/message', {
      turn: 1,
      step: 1,
      message: assistant('a1', [{ type: 'text', text: 'hello' }]),
    })
    session.append('step/end', { turn: 1, step: 1 })
    session.append('user/message', user('u2', 'more'))
    session.append('step/start', { turn: 1, step: 2 })
    for (const chunk of CHUNKS) session.appendChunk(1, 2, chunk)
  }

  test('nonChunkSeq gives the first seq at or after its argument that holds no chunk entry', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    twoSteps(session)
    expect(session.seq).toBe(19)
    const expected = [0, 1, 2, 9, 9, 9, 9, 9, 9, 9, 10, 11, 12, 19, 19, 19, 19, 19, 19, 19, 19]
    expect(Array.from({ length: 21 }, (_, seq) => session.nonChunkSeq(seq))).toEqual(expected)
    // The answer a walk over the event types gives, from any seq.
    for (let seq = 0; seq <= session.seq; seq++) {
      let walked = seq
      while (walked < session.seq && session.eventTypeAt(walked) === 'assistant/chunk') walked++
      expect(session.nonChunkSeq(seq)).toBe(walked)
    }
    for (const bad of [-1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => session.nonChunkSeq(bad)).toThrow(
        new RangeError(`session ${session.id}: nonChunkSeq needs a non-negative integer seq, got ${bad}`),
      )
    }
  })

  test('a projection folds past each chunk run in one step: it reads no chunk entry, built or kept current', async () => {
    const app = await mountSessions()
    const types: ProjectionDefinition<readonly string[]> = {
      key: 'types',
      init: () => [],
      apply: (state, event) => [...state, event.type],
    }
    await app.plugin({
      inject: ['sessionProjections'],
      apply(ctx: Context) {
        ctx.sessionProjections.register(types)
      },
    })
    const session = await app.sessions.create()
    twoSteps(session)
    const read: number[] = []
    const eventAt = session.eventAt.bind(session)
    const eventTypeAt = session.eventTypeAt.bind(session)
    vi.spyOn(session, 'eventAt').mockImplementation((seq) => {
      read.push(seq)
      return eventAt(seq)
    })
    vi.spyOn(session, 'eventTypeAt').mockImplementation((seq) => {
      read.push(seq)
      return eventTypeAt(seq)
    })
    const opening = ['user/message', 'turn/start', 'step/start']
    const between = ['assistant/message', 'step/end', 'user/message', 'step/start']
    expect(app.sessionProjections.get(session, 'types')).toEqual([...opening, ...between])
    const answer = (step: number) =>
      session.append('assistant/message', {
        turn: 1,
        step,
        message: assistant(`a${step}`, [{ type: 'text', text: 'hello' }]),
      })
    answer(2)
    session.append('step/end', { turn: 1, step: 2 })
    session.append('step/start', { turn: 1, step: 3 })
    for (const chunk of CHUNKS) session.appendChunk(1, 3, chunk)
    answer(3)
    session.append('step/end', { turn: 1, step: 3 })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    expect(app.sessionProjections.get(session, 'types')).toEqual([
      ...opening,
      ...between,
      ...['assistant/message', 'step/end', 'step/start', 'assistant/message', 'step/end', 'turn/end'],
    ])
    expect(read.filter((seq) => eventTypeAt(seq) === 'assistant/chunk')).toEqual([])
  })
})
