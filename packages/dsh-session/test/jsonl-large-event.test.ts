/**
 * Issue 12 item 6: one large event is encoded without holding the event loop for its whole
 * `JSON.stringify` — its JSON is produced in pieces with turns of the event loop between them, and
 * the bytes are exactly what `JSON.stringify` writes.
 */
import { MessageId } from 'dsh-llm'
import { describe, expect, it } from 'vitest'
import { encodeBatch } from '../src/storage/json-lines.ts'
import { jsonPieces, STRING_PIECE_UNITS } from '../src/storage/large-event.ts'
import type { SessionEvent } from '../src/types.ts'

function userEvent(seq: number, text: string): SessionEvent {
  return {
    type: 'user/message',
    seq,
    time: seq,
    data: {
      id: MessageId(`m${seq}`),
      role: 'user',
      content: [{ type: 'text', text }],
      source: { kind: 'user' },
    },
  } as SessionEvent
}

/** A long string with escapes, non-ASCII and a surrogate pair straddling every piece boundary. */
function awkwardText(pieces: number): string {
  const unit = `${'a"\\\n\u00e9'.repeat(Math.floor((STRING_PIECE_UNITS - 2) / 5))}`
  const pad = 'b'.repeat(STRING_PIECE_UNITS - 1 - unit.length)
  return `${unit}${pad}\u{1f600}`.repeat(pieces)
}

async function encodeWithTicks(events: SessionEvent[], limit: number) {
  let ticks = 0
  let running = true
  const tick = () => {
    if (!running) return
    ticks++
    setImmediate(tick)
  }
  setImmediate(tick)
  try {
    const encoded = encodeBatch('s1', events, limit)
    const slices = await encoded
    return { sync: Array.isArray(encoded), text: Buffer.concat(slices).toString('utf8'), ticks }
  } finally {
    running = false
  }
}

describe('large events in the JSONL codec', () => {
  it('produces exactly JSON.stringify in pieces, keeping surrogate pairs whole', () => {
    const value = {
      a: awkwardText(3),
      skipped: undefined,
      list: [1, undefined, 'x', null, true, { nested: awkwardText(2) }],
      n: -0.5,
    }
    const pieces = [...jsonPieces(value)]
    expect(pieces.join('')).toBe(JSON.stringify(value))
    expect(pieces.some((piece) => piece.includes('\\ud83d'))).toBe(false)
  })

  it('encodes one 6 MiB event across several event-loop turns, byte for byte', async () => {
    const events = [userEvent(0, 'before'), userEvent(1, awkwardText(24)), userEvent(2, 'after')]
    const result = await encodeWithTicks(events, 64 * 1024 * 1024)
    expect(result.sync).toBe(false)
    expect(result.text).toBe(events.map((event) => `${JSON.stringify(event)}\n`).join(''))
    expect(result.ticks).toBeGreaterThanOrEqual(4)
  })

  it('refuses a large event over the limit with its whole size, encoded in pieces', async () => {
    const event = userEvent(0, 'z'.repeat(3 * 1024 * 1024))
    const size = Buffer.byteLength(JSON.stringify(event))
    await expect(encodeWithTicks([event], 2 * 1024 * 1024)).rejects.toMatchObject({
      code: 'EVENT_TOO_LARGE',
      message: `session s1: user/message at seq 0 is ${size} bytes serialized, over the limit of ${2 * 1024 * 1024} bytes; nothing was written`,
    })
  })

  it('keeps a batch of small events synchronous (no await on the hot path)', async () => {
    const result = await encodeWithTicks([userEvent(0, 'a'), userEvent(1, 'b')], 1024)
    expect(result.sync).toBe(true)
  })
})
