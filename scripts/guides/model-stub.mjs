// A local OpenAI-compatible model for the guides' programs: `POST <url>/chat/completions` streams
// one text answer over SSE ("The answer is 42." — or, when the request offers tools and its last
// message is not a tool result, one call of the first tool with `{}`); `POST /v1/traces` takes OTLP
// span batches. Binds 127.0.0.1 only.
import { createServer } from 'node:http'

function sse(res, chunks) {
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`)
  res.end('data: [DONE]\n\n')
}

function answer(body) {
  const base = { id: 'stub-1', object: 'chat.completion.chunk', created: 0, model: body.model ?? 'stub' }
  const last = body.messages?.[body.messages.length - 1]
  const tool = body.tools?.[0]?.function?.name
  if (tool !== undefined && last?.role !== 'tool') {
    return [
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              role: 'assistant',
              tool_calls: [
                { index: 0, id: 'call_stub_1', type: 'function', function: { name: tool, arguments: '{}' } },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ]
  }
  return [
    {
      ...base,
      choices: [
        { index: 0, delta: { role: 'assistant', content: 'The answer is 42.' }, finish_reason: null },
      ],
    },
    {
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  ]
}

/** Starts the stub; resolves to `{ url, close }` with `url` the API root (`http://127.0.0.1:<port>/v1`). */
export function startModelStub() {
  const server = createServer((req, res) => {
    let text = ''
    req.on('data', (chunk) => {
      text += chunk
    })
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        // An OTLP/HTTP collector that takes every batch.
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end('{}')
        return
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }))
        return
      }
      sse(res, answer(JSON.parse(text)))
    })
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      resolve({
        url: `http://127.0.0.1:${address.port}/v1`,
        close: () => new Promise((done) => server.close(() => done())),
      })
    })
  })
}
