import type { StreamChunk } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { piecesFetch, prompt, run } from './helpers.ts'
import { type FixtureServer, fixture, sseReply, startServer } from './server.ts'

let server: FixtureServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const body = fixture('unicode.sse')

/** Byte offsets strictly inside ü (2 bytes), 東 (3), 🌸 (4, cut after its second byte) and — (3). */
function insideCharacters(): number[] {
  const at = (text: string, plus: number) => body.indexOf(Buffer.from(text)) + plus
  return [at('ü', 1), at('東', 2), at('🌸', 2), at('—', 1)]
}

const expected: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'Grüße aus 東京 🌸' },
  { type: 'text-delta', index: 0, text: ' — ça va?' },
  { type: 'block-end', index: 0, block: { type: 'text', text: 'Grüße aus 東京 🌸 — ça va?' } },
  { type: 'usage', usage: { inputTokens: 12, outputTokens: 9, cacheReadTokens: 0 } },
  { type: 'finish', reason: { kind: 'stop' } },
]

describe('UTF-8 split across network reads', () => {
  it('decodes characters whose bytes arrive in separate writes from the server', async () => {
    const cuts = insideCharacters()
    expect(cuts.every((cut) => (body[cut] ?? 0) >= 0x80 && (body[cut] ?? 0) < 0xc0)).toBe(true)
    server.reply(sseReply(body, cuts, { delayMs: 15 }))
    expect(await run(openAiCompatible({ baseURL: server.baseURL }), prompt())).toEqual(expected)
  })

  it('decodes the same bytes delivered as exactly those pieces, and one byte at a time', async () => {
    const cuts = insideCharacters()
    const pieces: Uint8Array[] = []
    let from = 0
    for (const cut of [...cuts, body.length]) {
      pieces.push(body.subarray(from, cut))
      from = cut
    }
    const pieceAdapter = openAiCompatible({ baseURL: 'http://127.0.0.1:9', fetch: piecesFetch(pieces) })
    expect(await run(pieceAdapter, prompt())).toEqual(expected)
    const bytes = Array.from(body, (byte) => Uint8Array.of(byte))
    const byteAdapter = openAiCompatible({ baseURL: 'http://127.0.0.1:9', fetch: piecesFetch(bytes) })
    expect(await run(byteAdapter, prompt())).toEqual(expected)
  })
})
