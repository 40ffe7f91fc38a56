import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createDemoServer,
  createMcpHarness,
  headerTools,
  type McpHarness,
  results,
  until,
} from './harness.ts'

let harness: McpHarness | undefined
let http: Server | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
  await stop()
})

/** A Streamable HTTP endpoint at /mcp on 127.0.0.1 with one demo server per session. */
async function serve(
  lines: string[],
  seen: Array<string | undefined>,
  port = 0,
): Promise<{ url: string; port: number }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  const server = createServer(async (req: IncomingMessage, res) => {
    seen.push(req.headers.authorization)
    const id = req.headers['mcp-session-id']
    let transport = typeof id === 'string' ? sessions.get(id) : undefined
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          if (transport !== undefined) sessions.set(sessionId, transport)
        },
      })
      await createDemoServer((line) => lines.push(line)).connect(transport)
    }
    await transport.handleRequest(req, res)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  http = server
  const bound = (server.address() as AddressInfo).port
  return { url: `http://127.0.0.1:${bound}/mcp`, port: bound }
}

async function stop(): Promise<void> {
  const server = http
  http = undefined
  if (server === undefined) return
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
}

describe('McpTools over Streamable HTTP on 127.0.0.1', () => {
  it('sends the configured headers, runs calls and follows tools/list_changed', async () => {
    const lines: string[] = []
    const seen: Array<string | undefined> = []
    const { url } = await serve(lines, seen)
    harness = await createMcpHarness(
      { servers: { web: { url, headers: { Authorization: 'Bearer t0ken' } } } },
      [
        toolCallResponse('c1', 'web__echo', { text: 'over http' }),
        toolCallResponse('c2', 'web__grow', {}),
        toolCallResponse('c3', 'web__extra', {}),
        textResponse('done'),
      ],
    )
    const { app } = harness
    app.on('tools/post-execute', async (input, next) => {
      const output = await next()
      if (input.call.name === 'web__grow')
        await until(() => app.tools.get('web__extra') !== undefined, 'extra')
      return output
    })
    await app.mcp.whenReady('web')
    const before = app.tools.names()
    const session = await harness.run('go')
    expect(results(session)).toEqual([
      { text: 'echo: over http', isError: false },
      { text: 'grown', isError: false },
      { text: 'extra!', isError: false },
    ])
    expect(headerTools(session)).toEqual([
      { reason: 'initial', tools: [...before] },
      { reason: 'change', tools: [...before, 'web__extra'] },
    ])
    expect(lines).toEqual(['called:echo:over http'])
    expect(new Set(seen)).toEqual(new Set(['Bearer t0ken']))
  })

  it('a server that goes away: the call fails, the tools go, and come back when it is up again', async () => {
    const lines: string[] = []
    const { url, port } = await serve(lines, [])
    harness = await createMcpHarness(
      { servers: { web: { url } }, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } },
      [
        toolCallResponse('c1', 'web__echo', { text: 'one' }),
        toolCallResponse('c2', 'web__echo', { text: 'two' }),
        textResponse('done'),
      ],
    )
    const { app } = harness
    await app.mcp.whenReady('web')
    await stop()
    app.on('tools/post-execute', async (input, next) => {
      const output = await next()
      if (input.call.id === 'c1') {
        await until(() => app.mcp.status('web').state === 'reconnecting', 'reconnecting')
        expect(app.tools.names()).toEqual([])
        await serve(lines, [], port)
        await app.mcp.whenReady('web', { timeoutMs: 10_000 })
      }
      return output
    })
    const session = await harness.run('go')
    expect(results(session)).toEqual([
      {
        text: expect.stringMatching(
          /^\[MCP_CONNECTION_LOST\] MCP tool "echo" on server "web": the transport failed during the call \(/,
        ),
        isError: true,
      },
      { text: 'echo: two', isError: false },
    ])
    expect(lines).toEqual(['called:echo:two'])
  })
})
