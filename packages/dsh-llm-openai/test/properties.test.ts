import type { StreamChunk } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { piecesFetch, prompt, run } from './helpers.ts'
import { fixture } from './server.ts'

const fixtures = [
  'text.sse',
  'reasoning-text.sse',
  'parallel-tools.sse',
  'unicode.sse',
  'length.sse',
  'cut-mid-tool.sse',
  'malformed-json.sse',
  'multiline-data.sse',
]

function split(body: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const sorted = [...new Set(cuts)].sort((a, b) => a - b)
  const pieces: Uint8Array[] = []
  let from = 0
  for (const cut of [...sorted, body.length]) {
    pieces.push(body.subarray(from, cut))
    from = cut
  }
  return pieces
}

function chunksOf(pieces: readonly Uint8Array[]): Promise<StreamChunk[]> {
  return run(openAiCompatible({ baseURL: 'http://127.0.0.1:9', fetch: piecesFetch(pieces) }), prompt())
}

describe('network framing does not change the chunks', () => {
  for (const name of fixtures) {
    for (const lineEnd of ['\n', '\r\n', '\r']) {
      it(`${name} with ${JSON.stringify(lineEnd)} line ends, split at any byte offsets`, async () => {
        const body = Buffer.from(fixture(name).toString('utf8').replaceAll('\n', lineEnd))
        const whole = await chunksOf([body])
        expect(whole.at(-1)?.type).toBe('finish')
        // Half the cuts land right after a CR, LF or a multi-byte lead byte, where framing bugs live.
        const risky: number[] = []
        body.forEach((byte, at) => {
          if (byte === 13 || byte === 10 || byte >= 0xc0) risky.push(at + 1)
        })
        const cut = fc.oneof(fc.integer({ min: 0, max: body.length }), fc.constantFrom(...risky))
        await fc.assert(
          fc.asyncProperty(fc.array(cut, { maxLength: 12 }), async (cuts) => {
            expect(await chunksOf(split(body, cuts))).toEqual(whole)
          }),
          { numRuns: 40 },
        )
      })
    }
  }
})
