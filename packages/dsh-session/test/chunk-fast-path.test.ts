/**
 * `assistant/chunk` appends take a hand-written copy-and-check path for the common chunk forms. It
 * must be indistinguishable from the general path (snapshot, then schema): the same committed bytes
 * (keys in the same order), deep-frozen and detached, and for anything the general path refuses the
 * same typed error, with nothing committed. The reference here is the general path itself, reached
 * through its public parts (`snapshotJson`, then `validateEvent`).
 */
import { MemoryStorage, type Session, SessionError, snapshotJson, validateEvent } from 'dsh-session'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { chunkDataBound, chunkDataEstimate, snapshotChunkData } from '../src/chunk-snapshot.ts'
import { estimateBytes } from '../src/storage/write-queue.ts'
import { mountSessions, refusal } from './support.ts'

type Outcome = { ok: true; json: string } | { ok: false; code: string; message: string }

/** What the general path makes of `data` appended as `assistant/chunk` at `seq` (step 1 of turn 1 open). */
function reference(data: unknown, seq: number): Outcome {
  try {
    const copy = snapshotJson(data, 'assistant/chunk')
    validateEvent({ type: 'assistant/chunk', seq, time: 0, data: copy })
    const { turn, step } = copy as { turn: unknown; step: unknown }
    if (turn !== 1) return { ok: false, code: 'ENCLOSURE', message: '' }
    if (step !== 1) return { ok: false, code: 'ENCLOSURE', message: '' }
    return { ok: true, json: JSON.stringify(copy) }
  } catch (error) {
    if (!(error instanceof SessionError)) throw error
    return { ok: false, code: error.code, message: error.message }
  }
}

function isDeepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true
  if (!Object.isFrozen(value)) return false
  return Object.values(value).every(isDeepFrozen)
}

/** Shuffles the keys of `record` (a new plain object), with `extra` added when given. */
function reorder(record: Record<string, unknown>, order: readonly number[], extra: boolean): object {
  const keys = Object.keys(record)
  const sorted = keys.map((key, i) => [order[i % order.length] ?? 0, i, key] as const)
  sorted.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const out: Record<string, unknown> = {}
  for (const [, , key] of sorted) out[key] = record[key]
  if (extra) out.note = 'extra'
  return out
}

const odd = fc.constantFrom<unknown>(
  -0,
  -1,
  1.5,
  Number.NaN,
  Infinity,
  '',
  'x',
  null,
  undefined,
  true,
  [],
  {},
)
const value = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: valid, weight: 10 }, { arbitrary: odd, weight: 1 })
const text = fc.string({ maxLength: 4 })
const index = value(fc.nat(3))
const block = fc.oneof(
  fc.record({ type: fc.constantFrom('text', 'reasoning'), text: value(text) }),
  fc.record({ type: fc.constant('tool-call'), id: value(text), name: value(text), arguments: value(text) }),
  fc.record({
    type: fc.constant('tool-result'),
    toolCallId: value(text),
    content: fc.constant([{ type: 'text', text: 'r' }]),
  }),
  fc.record({ type: fc.constant('image'), url: text }),
)
const chunk = fc.oneof(
  fc.record({ type: fc.constantFrom('text-delta', 'reasoning-delta', 'x-delta'), index, text: value(text) }),
  fc.record({ type: fc.constant('block-start'), index, blockType: value(text) }),
  fc.record(
    {
      type: fc.constant('tool-call-delta'),
      index,
      id: value(text),
      name: value(text),
      argumentsDelta: value(text),
    },
    { requiredKeys: ['type', 'index', 'argumentsDelta'] },
  ),
  fc.record({ type: fc.constant('block-end'), index, block: value(block) }),
  fc.record({
    type: fc.constant('usage'),
    usage: value(
      fc.record(
        { inputTokens: value(fc.nat(9)), outputTokens: value(fc.nat(9)), reasoningTokens: fc.nat(9) },
        { requiredKeys: ['inputTokens', 'outputTokens'] },
      ),
    ),
  }),
  fc.record({
    type: fc.constant('finish'),
    reason: value(
      fc.oneof(
        fc.record({ kind: fc.constantFrom('stop', 'tool-calls', 'max-tokens', 'paused') }),
        fc.record({
          kind: fc.constantFrom('error', 'aborted'),
          failure: fc.record({ message: text, code: value(text) }),
        }),
      ),
    ),
  }),
)
/** A chunk payload: mostly well-formed; sometimes odd values, reordered or extra keys, a null prototype. */
const payload = fc
  .tuple(
    chunk,
    fc.record({ turn: value(fc.constant(1)), step: value(fc.constantFrom(1, 2)) }),
    fc.array(fc.nat(3), { minLength: 1, maxLength: 4 }),
    fc.constantFrom('as-is', 'as-is', 'as-is', 'reorder-chunk', 'reorder-data', 'extra', 'null-proto'),
  )
  .map(([chunkValue, { turn, step }, order, variant]): unknown => {
    const record = chunkValue as Record<string, unknown>
    switch (variant) {
      case 'reorder-chunk':
        return { turn, step, chunk: reorder(record, order, false) }
      case 'reorder-data':
        return reorder({ turn, step, chunk: record }, order, false)
      case 'extra':
        return { turn, step, chunk: reorder(record, [0], true) }
      case 'null-proto':
        return { turn, step, chunk: Object.assign(Object.create(null) as object, record) }
      default:
        return { turn, step, chunk: record }
    }
  })

async function openStep(): Promise<Session> {
  const app = await mountSessions()
  const session = await app.sessions.create()
  session.append('turn/start', { turn: 1, trigger: { kind: 'send', target: 'next-turn' } })
  session.append('step/start', { turn: 1, step: 1 })
  return session
}

describe('assistant/chunk fast path', () => {
  test('commits exactly what the general path commits, and refuses exactly what it refuses', async () => {
    const session = await openStep()
    await fc.assert(
      fc.asyncProperty(payload, async (data) => {
        const seq = session.seq
        const expected = reference(data, seq)
        let actual: Outcome
        try {
          const event = session.append('assistant/chunk', data as never)
          expect(isDeepFrozen(event)).toBe(true)
          expect(event.data).not.toBe(data)
          actual = { ok: true, json: JSON.stringify(event.data) }
        } catch (error) {
          if (!(error instanceof SessionError)) throw error
          actual = { ok: false, code: error.code, message: error.message }
          expect(session.seq).toBe(seq)
        }
        if (expected.ok || actual.ok || expected.code === 'ENCLOSURE') {
          expect(actual.ok ? actual : { ok: false, code: actual.code }).toEqual(
            expected.ok ? expected : { ok: false, code: expected.code },
          )
        } else expect(actual).toEqual(expected)
      }),
      { numRuns: 2000 },
    )
  })

  test("the writer's size estimate of a fast-path chunk is what its walk gives", () => {
    let measured = 0
    fc.assert(
      fc.property(payload, (data) => {
        const copy = snapshotChunkData(data)
        if (copy === undefined) return
        const estimate = chunkDataEstimate(copy)
        if (estimate < 0) {
          // Only the open records are left to the walk.
          expect(['usage', 'finish']).toContain(copy.chunk.type)
          expect(chunkDataBound(copy)).toBe(Number.POSITIVE_INFINITY)
          return
        }
        measured++
        expect(estimate).toBe(estimateBytes(copy))
      }),
      { numRuns: 2000 },
    )
    expect(measured).toBeGreaterThan(100)
  })

  test('a chunk taken by the fast path is detached from its input', async () => {
    const session = await openStep()
    const chunk = { type: 'text-delta' as const, index: 0, text: 'hi' }
    const data = { turn: 1, step: 1, chunk }
    const event = session.append('assistant/chunk', data)
    ;(chunk as { text: string }).text = 'changed'
    ;(data as { step: number }).step = 9
    expect(event.data).toEqual({ turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hi' } })
    expect(event.data.chunk).not.toBe(chunk)
  })

  test('an inherited enumerable key counts as no key, as on the general path', async () => {
    const session = await openStep()
    const cases: [string, () => object][] = [
      ['text', () => ({ turn: 1, step: 1, chunk: { type: 'text-delta', index: 0 } })],
      ['text', () => ({ turn: 1, step: 1, chunk: { type: 'text-delta', text: 'x', index: 0 } })],
      ['turn', () => ({ step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } })],
      [
        'name',
        () => ({ turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 0, argumentsDelta: '' } }),
      ],
    ]
    for (const [key, make] of cases) {
      // The value the key would need: a string for chunk keys, the open turn for `turn`.
      const value = key === 'turn' ? 1 : 'x'
      Object.defineProperty(Object.prototype, key, {
        value,
        enumerable: true,
        configurable: true,
        writable: true,
      })
      let expected: Outcome
      let actual: Outcome
      try {
        const seq = session.seq
        expected = reference(make(), seq)
        try {
          actual = { ok: true, json: JSON.stringify(session.append('assistant/chunk', make() as never).data) }
        } catch (error) {
          if (!(error instanceof SessionError)) throw error
          actual = { ok: false, code: error.code, message: error.message }
        }
      } finally {
        delete (Object.prototype as Record<string, unknown>)[key]
      }
      expect(actual).toEqual(expected)
    }
  })

  test('a bad delta fails with the typed error naming the path, and nothing commits', async () => {
    const session = await openStep()
    const bad = { turn: 1, step: 1, chunk: { type: 'text-delta', index: -0, text: 'x' } }
    expect(refusal(() => session.append('assistant/chunk', bad as never))).toEqual({
      code: 'NOT_JSON',
      message: 'assistant/chunk: data.chunk.index is -0; event data must be plain JSON',
    })
    const missing = { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0 } }
    expect(refusal(() => session.append('assistant/chunk', missing as never))).toEqual({
      code: 'INVALID_EVENT',
      message:
        'invalid assistant/chunk event at seq 2: data.chunk.text: Invalid input: expected string, received undefined',
    })
    expect(session.seq).toBe(2)
  })

  test('the size limit holds for fast-path chunks: exact at the boundary, the same error', async () => {
    const app = await mountSessions({ maxEventBytes: 200 })
    const session = await app.sessions.create()
    session.append('turn/start', { turn: 1, trigger: { kind: 'send', target: 'next-turn' } })
    session.append('step/start', { turn: 1, step: 1 })
    const delta = (text: string) => ({
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta' as const, index: 0, text },
    })
    const envelope = (text: string) =>
      Buffer.byteLength(JSON.stringify({ type: 'assistant/chunk', seq: 2, time: 1002, data: delta(text) }))
    const room = 200 - envelope('')
    const fits = 'é'.repeat(Math.floor(room / 2)) + (room % 2 === 1 ? 'x' : '')
    expect(envelope(fits)).toBe(200)
    expect(session.append('assistant/chunk', delta(fits)).seq).toBe(2)
    const over = `${fits}x`
    expect(refusal(() => session.append('assistant/chunk', { ...delta(over) }))).toEqual({
      code: 'EVENT_TOO_LARGE',
      message: `session ${session.id}: assistant/chunk at seq 3 is 201 bytes serialized, over the limit of 200 bytes; nothing was written`,
    })
    const block = {
      type: 'block-end' as const,
      index: 0,
      block: { type: 'text' as const, text: 'y'.repeat(300) },
    }
    expect(refusal(() => session.append('assistant/chunk', { turn: 1, step: 1, chunk: block })).code).toBe(
      'EVENT_TOO_LARGE',
    )
    expect(session.seq).toBe(3)
  })

  test('fast-path chunks reach chunk listeners and storage, and are kept in the step run', async () => {
    const storage = new MemoryStorage()
    const app = await mountSessions({ storage })
    const heard: string[] = []
    app.sessions.onEvent((_session, event) => heard.push(`event ${event.seq}`))
    app.sessions.onChunk((_session, seq) => heard.push(`chunk ${seq}`))
    const session = await app.sessions.create()
    session.append('turn/start', { turn: 1, trigger: { kind: 'send', target: 'next-turn' } })
    session.append('step/start', { turn: 1, step: 1 })
    const committed = [
      session.append('assistant/chunk', {
        turn: 1,
        step: 1,
        chunk: { type: 'block-start', index: 0, blockType: 'text' },
      }),
      session.append('assistant/chunk', {
        turn: 1,
        step: 1,
        chunk: { type: 'text-delta', index: 0, text: 'a' },
      }),
      session.append('assistant/chunk', {
        turn: 1,
        step: 1,
        chunk: { type: 'block-end', index: 0, block: { type: 'text', text: 'a' } },
      }),
    ]
    const bytes = JSON.stringify(committed)
    session.append('assistant/message', {
      turn: 1,
      step: 1,
      message: {
        id: 'm1',
        role: 'assistant',
        content: [{ type: 'text', text: 'a' }],
        source: { kind: 'model', provider: 'p', model: 'm' },
      } as never,
    })
    await session.flush()
    expect(heard).toEqual(['event 0', 'event 1', 'chunk 2', 'chunk 3', 'chunk 4', 'event 5'])
    expect(JSON.stringify(session.events.slice(2, 5))).toBe(bytes)
    expect(JSON.stringify((await storage.load(session.id)).events.slice(2, 5))).toBe(bytes)
    // Folded: the log's slots hold one run; reading decodes new, equal objects.
    expect(session.events[3]).not.toBe(committed[1])
    expect(session.events[3]).toEqual(committed[1])
  })
})
