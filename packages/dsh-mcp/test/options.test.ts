import { Context } from 'cordis'
import { ToolRegistry } from 'dsh-agent-loop'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import McpTools from 'dsh-mcp'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createDemoServer,
  createMcpHarness,
  inMemoryDemo,
  type McpHarness,
  results,
  until,
} from './harness.ts'

let harness: McpHarness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

describe('McpTools options', () => {
  it('timeoutMs: a call past it is cancelled on the server and gets MCP_TIMEOUT', async () => {
    const lines: string[] = []
    harness = await createMcpHarness(
      { servers: { demo: { transport: inMemoryDemo(lines) } }, timeoutMs: 200 },
      [toolCallResponse('c1', 'demo__slow', { steps: 0 }), textResponse('done')],
    )
    await harness.app.mcp.whenReady()
    const session = await harness.run('go')
    expect(results(session)).toEqual([
      {
        text: '[MCP_TIMEOUT] MCP tool "slow" on server "demo" did not finish within 200 ms and was cancelled',
        isError: true,
      },
    ])
    await until(() => lines.length === 3, 'the server to see the cancellation')
    expect(lines).toEqual([
      'called:slow',
      'waiting:slow',
      'cancelled:slow:McpError: MCP error -32001: Request timed out',
    ])
  })

  it('include and exclude filter on <server>/<tool>', async () => {
    harness = await createMcpHarness({
      servers: { demo: { transport: inMemoryDemo([]) }, other: { transport: inMemoryDemo([]) } },
      include: ['demo/*', 'other/echo'],
      exclude: ['demo/s*', 'demo/files.*'],
    })
    await harness.app.mcp.whenReady()
    expect([...harness.app.tools.names()].sort()).toEqual([
      'demo__add',
      'demo__echo',
      'demo__fail',
      'demo__grow',
      'demo__media',
      'other__echo',
    ])
  })

  it('refuses a bad config and a missing ToolRegistry with errors that name the problem', async () => {
    const app = new Context()
    await expect(app.plugin(McpTools, { servers: {} })).rejects.toMatchObject({ code: 'MISSING_PLUGIN' })
    await app.plugin(ToolRegistry)
    const cases: Array<[unknown, string]> = [
      [
        { servers: { a__b: { command: 'x' } } },
        'McpTools: server name "a__b" must be 1-32 characters of letters, digits and -, in runs joined by single _',
      ],
      [
        { servers: { a: { command: 'x', url: 'http://h' } } },
        'McpTools: server "a" needs exactly one of command (stdio), url (Streamable HTTP) or transport (a factory)',
      ],
      [{ servers: { a: { url: 'ftp://h' } } }, 'McpTools: server "a": url must be http: or https:, got ftp:'],
      [{ servers: {}, timeoutMs: 0 }, 'McpTools: timeoutMs must be a number > 0 (Infinity for none), got 0'],
    ]
    for (const [config, message] of cases) {
      await expect(app.plugin(McpTools, config as never)).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
        message,
      })
    }
  })
})

describe('a server that is gone for good', () => {
  it('reconnect: false — its tools go, and a call resolved before the loss gets MCP_SERVER_UNAVAILABLE', async () => {
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
    const { CallId } = await import('dsh-llm')
    const servers: Array<ReturnType<typeof createDemoServer>> = []
    const factory = () => {
      const [client, side] = InMemoryTransport.createLinkedPair()
      const server = createDemoServer()
      servers.push(server)
      void server.connect(side)
      return client
    }
    harness = await createMcpHarness({ servers: { demo: { transport: factory } }, reconnect: false })
    const { app } = harness
    await app.mcp.whenReady('demo')
    const echo = app.tools.get('demo__echo')
    await servers[0]?.close()
    await until(() => app.mcp.status('demo').state === 'failed', 'the server to be given up')
    expect(app.tools.names()).toEqual([])
    expect(app.mcp.status('demo')).toEqual({
      server: 'demo',
      state: 'failed',
      tools: [],
      attempt: 0,
      error: 'the connection closed',
    })
    const context = {
      signal: new AbortController().signal,
      callId: CallId('late'),
      agent: undefined as never,
    }
    expect(await echo?.definition.execute({ text: 'late' }, context)).toEqual({
      content:
        '[MCP_SERVER_UNAVAILABLE] MCP tool "echo" on server "demo" was not called: the server is failed (the connection closed)',
      isError: true,
    })
    await expect(app.mcp.whenReady('demo')).rejects.toMatchObject({ code: 'SERVER_UNAVAILABLE' })
    expect(servers).toHaveLength(1)
  })
})
