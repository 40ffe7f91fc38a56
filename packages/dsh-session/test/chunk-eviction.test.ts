import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { MemoryStorage, type Session, type SessionEvent } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { assistant, mountSessions, user } from './support.ts'

/**
 * A full garbage collection (V8's `gc`, reached without starting the process with --expose-gc),
 * after a macrotask turn: a `WeakRef`'s target is kept alive until the current job's microtasks end.
 */
async function collectGarbage(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  gc()
}

const CHUNKS = ['Hel', 'lo, ', 'wor', 'ld \ud800 ', '"quoted"']

/** Appends one text step of turn 1: step/start, one chunk per text, assistant/message, step/end. */
function textStep(session: Session, step: number, refs: WeakRef<SessionEvent>[]): void {
  session.append('step/start', { turn: 1, step })
  for (const [index, text] of CHUNKS.entries()) {
    const chunk = session.append('assistant/chunk', {
      turn: 1,
      step,
      chunk: { type: 'text-delta', index, text: `${text}${step}` },
    })
    refs.push(new WeakRef(chunk))
  }
  // Other shapes: a key order of its own, a nested value.
  const end = session.append('assistant/chunk', {
    turn: 1,
    step,
    chunk: { type: 'block-end', index: 0, block: { type: 'text', text: CHUNKS.join('') } },
  })
  const usage = session.append('assistant/chunk', {
    turn: 1,
    step,
    chunk: { type: 'usage', usage: { outputTokens: 5, inputTokens: 3 } },
  })
  refs.push(new WeakRef(end), new WeakRef(usage))
  session.append('assistant/message', {
    turn: 1,
    step,
    message: assistant(`a${step}`, [{ type: 'text', text: CHUNKS.join('') }]),
  })
  session.append('step/end', { turn: 1, step })
}

async function twoSteps(
  storage = new MemoryStorage(),
): Promise<{ session: Session; expected: SessionEvent[]; refs: WeakRef<SessionEvent>[] }> {
  const app = await mountSessions({ storage })
  const session = await app.sessions.create()
  const refs: WeakRef<SessionEvent>[] = []
  session.append('user/message', user('u1'))
  session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
  textStep(session, 1, refs)
  textStep(session, 2, refs)
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
  // A deep plain copy, holding none of the committed objects.
  const expected = JSON.parse(JSON.stringify(session.events)) as SessionEvent[]
  await session.flush()
  return { session, expected, refs }
}

describe('chunk eviction', () => {
  test('after a step commits, neither the session nor the memory storage keeps its chunk event objects', async () => {
    const storage = new MemoryStorage()
    const { session, expected, refs } = await twoSteps(storage)
    await collectGarbage()
    expect(refs.map((ref) => ref.deref() === undefined)).toEqual(refs.map(() => true))
    // The log still reads the same: every event, every field, frozen.
    expect(session.events.length).toBe(expected.length)
    expect([...session.events]).toEqual(expected)
    // Byte for byte, key order included.
    expect(JSON.stringify(session.events)).toBe(JSON.stringify(expected))
    expect(session.events.slice(3, 9)).toEqual(expected.slice(3, 9))
    expect(session.events.every((event) => Object.isFrozen(event) && Object.isFrozen(event.data))).toBe(true)
    const chunk = session.events[4]
    expect(chunk?.type === 'assistant/chunk' && Object.isFrozen(chunk.data.chunk)).toBe(true)
    // And the storage serves the same events.
    const stored: SessionEvent[] = []
    for await (const event of storage.read(session.id, 0)) stored.push(event)
    expect(stored).toEqual(expected)
    expect([...(await storage.load(session.id)).events]).toEqual(expected)
  })

  test('a re-opened and a forked session read the same events back', async () => {
    const storage = new MemoryStorage()
    const app = await mountSessions({ storage })
    const session = await app.sessions.create()
    const refs: WeakRef<SessionEvent>[] = []
    session.append('user/message', user('u1'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    textStep(session, 1, refs)
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    const expected = JSON.parse(JSON.stringify(session.events)) as SessionEvent[]
    const fork = await app.sessions.fork(session, session.seq)
    expect(fork.events.slice(0, expected.length)).toEqual(expected)
    await app.sessions.close(session)
    const reopened = await app.sessions.open(session.id)
    expect([...reopened.events]).toEqual(expected)
  })

  test('a step whose chunks are interleaved with other events keeps them all, in order', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/chunk', {
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta', index: 0, text: 'a' },
    })
    session.append('user/message', user('u2'))
    session.append('assistant/chunk', {
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta', index: 0, text: 'b' },
    })
    session.append('assistant/message', {
      turn: 1,
      step: 1,
      message: assistant('a1', [{ type: 'text', text: 'ab' }]),
    })
    expect(session.events.map((event) => `${event.seq}:${event.type}`)).toEqual([
      '0:user/message',
      '1:turn/start',
      '2:step/start',
      '3:assistant/chunk',
      '4:user/message',
      '5:assistant/chunk',
      '6:assistant/message',
    ])
  })

  test('a run keeps every key order of its chunks, past the shapes the encoder shares between runs', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('user/message', user('u1'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    // 120 key orders of a tool-call delta: more shapes than the encoder remembers across runs.
    const orders = permutations(['type', 'index', 'id', 'name', 'argumentsDelta'])
    const values: Record<string, unknown> = { type: 'tool-call-delta', index: 0, id: 'c1', name: 'read' }
    for (const step of [1, 2]) {
      session.append('step/start', { turn: 1, step })
      const first = session.seq
      for (const [i, order] of orders.entries()) {
        const chunk = Object.fromEntries(order.map((key) => [key, values[key] ?? `{${step}:${i}}`]))
        session.append('assistant/chunk', { turn: 1, step, chunk: chunk as never })
      }
      const before = JSON.stringify(session.events.slice(first))
      session.append('assistant/message', {
        turn: 1,
        step,
        message: assistant(`a${step}`, [{ type: 'text', text: 'x' }]),
      })
      // Folded into a run by the message: read back byte for byte, key order included.
      expect(JSON.stringify(session.events.slice(first, first + orders.length))).toBe(before)
      session.append('step/end', { turn: 1, step })
    }
  })

  test('session.events stays read-only', async () => {
    const { session } = await twoSteps()
    expect(() => (session.events as SessionEvent[]).push()).toThrow(/read-only: push\(\)/)
  })
})

function permutations(keys: readonly string[]): string[][] {
  if (keys.length <= 1) return [[...keys]]
  return keys.flatMap((key, i) =>
    permutations([...keys.slice(0, i), ...keys.slice(i + 1)]).map((rest) => [key, ...rest]),
  )
}
