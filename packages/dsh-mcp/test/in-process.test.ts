import { textResponse, toolCallResponse, toolCallsResponse } from 'dsh-llm/testing'
import { toolName } from 'dsh-mcp'
import { afterEach, describe, expect, it } from 'vitest'
import { createMcpHarness, headerTools, inMemoryDemo, type McpHarness, results, until } from './harness.ts'

let harness: McpHarness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const DOTTED = toolName('demo', 'files.read')

describe('McpTools over an in-process McpServer', () => {
  it('registers every tool as <server>__<tool> with its description and JSON Schema', async () => {
    const lines: string[] = []
    harness = await createMcpHarness({ servers: { demo: { transport: inMemoryDemo(lines) } } })
    await harness.app.mcp.whenReady('demo')
    expect(harness.app.tools.names()).toEqual([
      'demo__echo',
      'demo__add',
      'demo__media',
      'demo__fail',
      'demo__slow',
      DOTTED,
      'demo__grow',
      'demo__shrink',
    ])
    expect(DOTTED).toMatch(/^demo__files_read_[0-9a-f]{8}$/)
    expect(harness.app.tools.get('demo__echo')?.schema).toEqual({
      name: 'demo__echo',
      description: 'Echoes the text back.',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
      },
    })
    expect(harness.app.mcp.status('demo')).toMatchObject({ server: 'demo', state: 'ready', attempt: 0 })
  })

  it('runs calls in a turn: text, structured content, media, isError and invalid arguments', async () => {
    const lines: string[] = []
    harness = await createMcpHarness({ servers: { demo: { transport: inMemoryDemo(lines) } } }, [
      toolCallsResponse([
        { id: 'c1', name: 'demo__echo', args: { text: 'hi' } },
        { id: 'c2', name: 'demo__add', args: { a: 2, b: 3 } },
        { id: 'c3', name: 'demo__media', args: {} },
        { id: 'c4', name: 'demo__fail', args: {} },
        { id: 'c5', name: 'demo__echo', args: { text: 5 } },
        { id: 'c6', name: DOTTED, args: { path: '/x' } },
      ]),
      textResponse('done'),
    ])
    await harness.app.mcp.whenReady()
    const session = await harness.run('go')
    expect(results(session)).toEqual([
      { text: 'echo: hi', isError: false },
      { text: '2 + 3 = 5\n{"sum":5}', isError: false },
      {
        text: [
          '[image: image/png, 68 bytes, not shown]',
          '[audio: audio/wav, 3 bytes, not shown]',
          '[resource link: notes file:///notes.txt (text/plain): My notes]',
          '[resource: file:///a.txt (text/plain)]\nhello file',
          '[resource: file:///b.bin (application/octet-stream), 4 bytes, not shown]',
        ].join('\n'),
        isError: false,
      },
      { text: 'the disk is full', isError: true },
      { text: expect.stringContaining('must be string'), isError: true },
      { text: 'contents of /x', isError: false },
    ])
    // The invalid call never reached the server.
    expect(lines).toEqual(['called:echo:hi'])
  })

  it('re-syncs on tools/list_changed and logs the new set as a request/header change', async () => {
    const lines: string[] = []
    harness = await createMcpHarness({ servers: { demo: { transport: inMemoryDemo(lines) } } }, [
      toolCallResponse('c1', 'demo__grow', {}),
      toolCallResponse('c2', 'demo__extra', {}),
      toolCallResponse('c3', 'demo__shrink', {}),
      textResponse('done'),
    ])
    await harness.app.mcp.whenReady()
    const before = harness.app.tools.names()
    harness.app.on('tools/post-execute', async (input, next) => {
      const out = await next()
      // The change notification races the call's result: wait for the re-sync before the next step.
      if (input.call.name === 'demo__grow')
        await until(() => harness?.app.tools.get('demo__extra') !== undefined, 'extra')
      if (input.call.name === 'demo__shrink')
        await until(() => harness?.app.tools.get('demo__extra') === undefined, 'no extra')
      return out
    })
    const session = await harness.run('go')
    expect(results(session)).toEqual([
      { text: 'grown', isError: false },
      { text: 'extra!', isError: false },
      { text: 'shrunk', isError: false },
    ])
    expect(headerTools(session)).toEqual([
      { reason: 'initial', tools: [...before] },
      { reason: 'change', tools: [...before, 'demo__extra'] },
      { reason: 'change', tools: [...before] },
    ])
  })
})

describe('re-syncing a server whose tools/list fails', () => {
  it('keeps the previous set on a failed fetch, then takes the new one (a schema with $id registers again)', async () => {
    const { Server } = await import('@modelcontextprotocol/sdk/server/index.js')
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
    const { ListToolsRequestSchema, CallToolRequestSchema } = await import(
      '@modelcontextprotocol/sdk/types.js'
    )
    let listing: 'v1' | 'broken' | 'v2' = 'v1'
    let server: InstanceType<typeof Server> | undefined
    const tool = (description: string) => ({
      name: 'lookup',
      description,
      inputSchema: { $id: 'urn:lookup', type: 'object' as const, properties: { key: { type: 'string' } } },
    })
    const factory = () => {
      const [client, side] = InMemoryTransport.createLinkedPair()
      server = new Server(
        { name: 'flaky', version: '1.0.0' },
        { capabilities: { tools: { listChanged: true } } },
      )
      server.setRequestHandler(ListToolsRequestSchema, async () => {
        if (listing === 'broken') throw new Error('database down')
        return { tools: [tool(listing === 'v1' ? 'Looks up v1.' : 'Looks up v2.')] }
      })
      server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [] }))
      void server.connect(side)
      return client
    }
    harness = await createMcpHarness({ servers: { flaky: { transport: factory } } })
    const { app } = harness
    await app.mcp.whenReady('flaky')
    expect(app.tools.get('flaky__lookup')?.schema.description).toBe('Looks up v1.')
    listing = 'broken'
    await server?.sendToolListChanged()
    await until(() => harness?.warnings.length === 1, 'the failed re-sync')
    expect(harness.warnings).toEqual([
      {
        server: 'flaky',
        code: 'LIST_FAILED',
        message:
          're-listing the tools of MCP server "flaky" failed; its previous tools stay: MCP error -32603: database down',
      },
    ])
    expect(app.tools.names()).toEqual(['flaky__lookup'])
    expect(app.tools.get('flaky__lookup')?.schema.description).toBe('Looks up v1.')
    listing = 'v2'
    await server?.sendToolListChanged()
    await until(() => app.tools.get('flaky__lookup')?.schema.description === 'Looks up v2.', 'the new set')
    expect(app.tools.get('flaky__lookup')?.schema.parameters).toEqual({
      type: 'object',
      properties: { key: { type: 'string' } },
    })
    expect(harness.warnings).toHaveLength(1)
  })
})
