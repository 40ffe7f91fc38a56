import { mkdtemp } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type LlmAdapter, type LlmRequest, type StreamChunk, userText } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { recordReplay } from 'dsh-replay'
import { expect, it } from 'vitest'

const frames = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: 'lo.' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } },
]
const SSE = `${frames.map((f) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'gpt-x', ...f })}\n\n`).join('')}data: [DONE]\n\n`

async function collect(adapter: LlmAdapter, request: LlmRequest): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of adapter.stream(request)) chunks.push(chunk)
  return chunks
}

it('records dsh-llm-openai against a local server and replays it with the server gone', async () => {
  const bodies: string[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (part: Buffer) => {
      body += part.toString()
    })
    req.on('end', () => {
      bodies.push(body)
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.end(SSE)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const fixture = join(await mkdtemp(join(tmpdir(), 'dsh-replay-')), 'openai.json')
  const request: LlmRequest = { provider: 'openai', model: 'gpt-x', messages: [userText('Say hello.')] }
  const live = recordReplay({
    fixture,
    mode: 'record',
    adapter: openAiCompatible({ baseURL: `http://127.0.0.1:${port}/v1` }),
  })
  const recorded = await collect(live, request)
  await new Promise<void>((resolve) => server.close(() => resolve()))
  expect(bodies).toHaveLength(1)
  expect(recorded.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })

  const replayed = await collect(recordReplay({ fixture, mode: 'replay' }), {
    ...request,
    messages: [userText('Say hello.')],
  })
  expect(replayed).toEqual(JSON.parse(JSON.stringify(recorded)))
  expect(replayed.filter((c) => c.type === 'text-delta').map((c) => c.text)).toEqual(['Hel', 'lo.'])
})
