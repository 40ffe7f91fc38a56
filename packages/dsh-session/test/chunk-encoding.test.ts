/**
 * The sealed form of a chunk run (`chunk-encoding.ts`): decoding gives back exactly the chunks and
 * times that were encoded, keys in order; a block whose deltas spell its text keeps that text by
 * reference, not in the JSON; times that are not non-decreasing safe integers stay with the run.
 */
import { CallId, type StreamChunk } from 'dsh-llm'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { decodeRun, decodeRunTimes, encodeRun } from '../src/chunk-encoding.ts'
import { snapshotChunk } from '../src/chunk-snapshot.ts'

const STEP: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'he' },
  { type: 'text-delta', index: 0, text: 'llo ' },
  { type: 'text-delta', index: 0, text: 'world' },
  { type: 'block-end', index: 0, block: { type: 'text', text: 'hello world' } },
  { type: 'block-start', index: 1, blockType: 'tool-call' },
  { type: 'tool-call-delta', index: 1, id: CallId('c1'), name: 'read', argumentsDelta: '{"pa' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: 'th":1}' },
  {
    type: 'block-end',
    index: 1,
    block: { type: 'tool-call', id: CallId('c1'), name: 'read', arguments: '{"path":1}' },
  },
  { type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } },
  { type: 'finish', reason: { kind: 'tool-calls' } },
]

/** Encodes and decodes; expects the same chunks (as JSON, so key order counts) and times. */
function roundTrip(chunks: readonly StreamChunk[], times: readonly number[]) {
  const encoded = encodeRun(chunks, times)
  const decoded = decodeRun(encoded.json, encoded.texts)
  expect(JSON.stringify(decoded.chunks)).toBe(JSON.stringify(chunks))
  expect(decoded.chunks).toEqual(chunks)
  if (encoded.timesEncoded) expect(decoded.times).toEqual(times)
  else expect(decoded.times).toBeUndefined()
  expect(decodeRunTimes(encoded.json)).toEqual(decoded.times)
  return encoded
}

describe('chunk run encoding', () => {
  test('a step of text and a tool call: block texts by reference, not in the JSON', () => {
    const times = [1000, 1000, 1000, 1001, 1001, 1004, 1004, 1004, 1004, 1010, 1010]
    const encoded = roundTrip(STEP, times)
    expect(encoded.timesEncoded).toBe(true)
    expect(encoded.texts).toEqual(['hello world', '{"path":1}'])
    expect(encoded.texts?.[0]).toBe((STEP[4] as { block: { text: string } }).block.text)
    expect(encoded.json).not.toContain('hello')
    expect(encoded.json).not.toContain('path')
    expect(encoded.json.startsWith('[[1000,-2,1,-1,3,-3,6,-1],0,')).toBe(true)
    // The three text deltas hold only their lengths, in one row.
    expect(encoded.json).toMatch(/,\[-\d+,0,2,4,5\],/)
  })

  test('a block-end whose deltas do not spell its text, or whose deltas started in an earlier run, keeps every text', () => {
    const other: StreamChunk[] = STEP.map((chunk) =>
      chunk.type === 'block-end' && chunk.block.type === 'text'
        ? { ...chunk, block: { type: 'text', text: 'hello there' } }
        : chunk,
    )
    const encoded = roundTrip(
      other,
      other.map(() => 5),
    )
    expect(encoded.texts).toEqual(['{"path":1}'])
    expect(encoded.json).toContain('hello there')
    const tail = roundTrip(STEP.slice(2), [1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(tail.texts).toEqual(['{"path":1}'])
    expect(tail.json).toContain('hello world')
  })

  test('mixed delta kinds, extra block keys and odd key orders round-trip without being shared', () => {
    const odd = [
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'reasoning-delta', index: 0, text: 'ab' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'ab' } },
      { index: 2, type: 'text-delta', text: 'x' },
      { type: 'block-end', index: 2, block: { text: 'x', type: 'text' } },
      { type: 'text-delta', index: 3, text: 'y' },
      { type: 'block-end', index: 3, block: { type: 'text', text: 'y', extra: 1 } },
      { type: 'reasoning-delta', index: 4, text: 'r' },
      { type: 'block-end', index: 4, block: { type: 'reasoning', text: 'r' } },
    ] as unknown as StreamChunk[]
    const encoded = roundTrip(odd, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(encoded.texts).toEqual(['r'])
  })

  test('times that are not non-decreasing safe integers are left to the run', () => {
    for (const times of [
      [1.5, 2],
      [2, 1],
      [-0, 1],
      [2 ** 60, 2 ** 60],
    ]) {
      expect(roundTrip(STEP.slice(0, 2), times).timesEncoded).toBe(false)
    }
    expect(roundTrip(STEP.slice(0, 3), [-5, -5, 7]).timesEncoded).toBe(true)
  })

  test('any sequence of deltas and ends round-trips exactly', () => {
    const piece = fc.string({ maxLength: 4 })
    const chunk: fc.Arbitrary<StreamChunk> = fc.oneof(
      fc.record({
        type: fc.constant('block-start' as const),
        index: fc.nat(2),
        blockType: fc.constant('text'),
      }),
      fc.record({ type: fc.constant('text-delta' as const), index: fc.nat(2), text: piece }),
      fc.record({ type: fc.constant('reasoning-delta' as const), index: fc.nat(2), text: piece }),
      fc.record({
        type: fc.constant('tool-call-delta' as const),
        index: fc.nat(2),
        argumentsDelta: piece,
      }),
      fc
        .record({ index: fc.nat(2), id: fc.option(fc.constant(CallId('c')), { nil: undefined }) })
        .chain(({ index, id }) =>
          fc.record({ name: fc.option(fc.constant('n'), { nil: undefined }), argumentsDelta: piece }).map(
            ({ name, argumentsDelta }): StreamChunk => ({
              type: 'tool-call-delta',
              index,
              ...(id === undefined ? {} : { id }),
              ...(name === undefined ? {} : { name }),
              argumentsDelta,
            }),
          ),
        ),
      fc.constant<StreamChunk>({ type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } }),
      fc.constant<StreamChunk>({ type: 'finish', reason: { kind: 'stop' } }),
      fc.record({
        type: fc.constant('block-end' as const),
        index: fc.nat(2),
        block: fc.oneof(
          fc.record({
            type: fc.constantFrom('text' as const, 'reasoning' as const),
            text: fc.string({ maxLength: 8 }),
          }),
          fc.record({
            type: fc.constant('tool-call' as const),
            id: fc.constant(CallId('c')),
            name: fc.constant('n'),
            arguments: fc.string({ maxLength: 8 }),
          }),
        ),
      }),
    )
    fc.assert(
      fc.property(fc.array(chunk, { minLength: 1, maxLength: 12 }), (chunks) => {
        // Make block-ends match their deltas often enough to exercise the shared form.
        const spelled = new Map<number, string>()
        const fixed = chunks.map((c): StreamChunk => {
          if (c.type === 'block-start') spelled.delete(c.index)
          if (c.type === 'text-delta' || c.type === 'reasoning-delta')
            spelled.set(c.index, (spelled.get(c.index) ?? '') + c.text)
          if (c.type === 'tool-call-delta')
            spelled.set(c.index, (spelled.get(c.index) ?? '') + c.argumentsDelta)
          if (c.type !== 'block-end') return c
          const text = spelled.get(c.index) ?? ''
          spelled.delete(c.index)
          return c.block.type === 'tool-call'
            ? { ...c, block: { ...c.block, arguments: text } }
            : ({ ...c, block: { type: c.block.type, text } } as StreamChunk)
        })
        const times = fixed.map((_, i) => 100 + Math.floor(i / 3))
        const general = roundTrip(fixed, times)
        // The session's own copies take the canonical encoder: the same text, the same texts.
        const copies = fixed.map((c) => snapshotChunk(JSON.parse(JSON.stringify(c))))
        expect(copies.every((c) => c !== undefined)).toBe(true)
        const canonical = encodeRun(copies as StreamChunk[], times, true)
        expect(canonical).toEqual(general)
      }),
      { numRuns: 300 },
    )
  })
})
