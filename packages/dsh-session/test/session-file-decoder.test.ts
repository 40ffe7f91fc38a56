import { type SessionEvent, SessionFileDecoder } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { header, userEvent, userEvents } from './fixtures/events.ts'

const file = 'mem.jsonl'
const headerLine = `${JSON.stringify(header('s1'))}\n`
const lines = (events: readonly unknown[]) => events.map((event) => `${JSON.stringify(event)}\n`).join('')

/** Decodes `bytes` pushed `size` bytes at a time; the events and what `end` reports. */
function decode(bytes: Buffer, size: number, options?: ConstructorParameters<typeof SessionFileDecoder>[1]) {
  const decoder = new SessionFileDecoder(file, options)
  const events: SessionEvent[] = []
  for (let at = 0; at < bytes.length; at += size) decoder.push(bytes.subarray(at, at + size), events)
  const { header: read, torn, end, nextSeq } = decoder.end()
  return { events, header: read, torn, end, nextSeq }
}

async function errorOf(run: () => unknown): Promise<{ code: string; message: string; where: unknown }> {
  try {
    run()
  } catch (error) {
    const { code, message, where } = error as { code: string; message: string; where: unknown }
    return { code, message, where }
  }
  throw new Error('expected a throw')
}

describe('SessionFileDecoder', () => {
  it('decodes the same events, torn line and end at every chunk size, characters cut anywhere', () => {
    const events = [userEvent(0, 'ü€𝄞 '.repeat(30)), ...userEvents(1, 3)]
    const complete = headerLine + lines(events)
    const bytes = Buffer.from(`${complete}{"type":"user/mess`)
    const whole = decode(bytes, bytes.length)
    expect(whole).toEqual({
      events,
      header: header('s1'),
      torn: { line: 6, offset: Buffer.byteLength(complete), bytes: 18 },
      end: Buffer.byteLength(complete),
      nextSeq: 4,
    })
    for (const size of [1, 2, 3, 7, 64, 1000]) expect(decode(bytes, size)).toEqual(whole)
    expect(Object.isFrozen(whole.events[0]?.data)).toBe(true)
  })

  it('treats a final complete line that is not JSON as torn, and one with lines after it as corrupt', async () => {
    const bytes = Buffer.from(`${headerLine}${lines(userEvents(0, 1))}{"broken\n`)
    expect(decode(bytes, 5).torn).toEqual({ line: 3, offset: bytes.length - 9, bytes: 9 })
    const followed = Buffer.concat([bytes, Buffer.from(lines([userEvent(1)]))])
    expect(await errorOf(() => decode(followed, 5))).toEqual({
      code: 'CORRUPT_LOG',
      message: `${file}:3: corrupt log at expected seq 1: the line is not valid JSON`,
      where: { file, line: 3, seq: 1 },
    })
    expect(await errorOf(() => decode(followed, 5, { mode: 'recorded' }))).toEqual({
      code: 'CORRUPT_LOG',
      message: `${file}:3: the line is not valid JSON`,
      where: { file, line: 3 },
    })
  })

  it('refuses a seq gap and an unknown type when loading, and passes both through when reading a recording', async () => {
    const plugin = { type: 'plugin/thing', seq: 2, time: 5, data: { any: ['thing'] } }
    const bytes = Buffer.from(headerLine + lines([userEvent(0), userEvent(2), plugin]))
    expect(await errorOf(() => decode(bytes, 9))).toEqual({
      code: 'CORRUPT_LOG',
      message: `${file}:3: corrupt log at expected seq 1: found seq 2`,
      where: { file, line: 3, seq: 1 },
    })
    const recorded = decode(bytes, 9, { mode: 'recorded' })
    expect(recorded.events).toEqual([userEvent(0), userEvent(2), plugin])
    expect(Object.isFrozen(recorded.events[2])).toBe(true)
    const known = Buffer.from(headerLine + lines([userEvent(0), { ...plugin, seq: 1 }]))
    expect(await errorOf(() => decode(known, 9))).toEqual({
      code: 'UNKNOWN_EVENT_TYPE',
      message: `${file}:3: seq 1: unknown event type "plugin/thing"`,
      where: { file, line: 3, seq: 1, eventType: 'plugin/thing' },
    })
  })

  it('checks the header first: the session id when one is expected, completeness, presence', async () => {
    const bytes = Buffer.from(headerLine)
    expect(decode(bytes, 4, { sessionId: 's1' }).header).toEqual(header('s1'))
    expect(await errorOf(() => decode(bytes, 4, { sessionId: 's2' }))).toEqual({
      code: 'CORRUPT_LOG',
      message: `${file}:1: header names session "s1", expected "s2"`,
      where: { file, line: 1, sessionId: 's2' },
    })
    expect(await errorOf(() => decode(bytes.subarray(0, 10), 4))).toMatchObject({
      message: `${file}:1: the header line is incomplete`,
    })
    expect(await errorOf(() => decode(Buffer.alloc(0), 4))).toMatchObject({
      message: `${file}:1: the file has no header line`,
    })
  })
})
