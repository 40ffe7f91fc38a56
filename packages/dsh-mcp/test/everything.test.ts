import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { textResponse, toolCallsResponse } from 'dsh-llm/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMcpHarness, type McpHarness, results } from './harness.ts'

// The installed bin of @modelcontextprotocol/server-everything, run with this node: no download.
const require = createRequire(import.meta.url)
const everything = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
)

let harness: McpHarness
beforeAll(async () => {
  harness = await createMcpHarness(
    { servers: { everything: { command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' } } },
    [
      toolCallsResponse([
        { id: 'c1', name: 'everything__echo', args: { message: 'hello' } },
        { id: 'c2', name: 'everything__get-sum', args: { a: 2, b: 40 } },
        { id: 'c3', name: 'everything__get-structured-content', args: { location: 'Chicago' } },
        { id: 'c4', name: 'everything__get-tiny-image', args: {} },
        {
          id: 'c5',
          name: 'everything__get-resource-reference',
          args: { resourceType: 'Text', resourceId: 2 },
        },
        { id: 'c6', name: 'everything__trigger-long-running-operation', args: { duration: 0.2, steps: 4 } },
      ]),
      textResponse('done'),
    ],
  )
  await harness.app.mcp.whenReady('everything', { timeoutMs: 15_000 })
}, 30_000)
afterAll(async () => {
  await harness.close()
})

describe('McpTools with @modelcontextprotocol/server-everything over stdio', () => {
  it('offers its tools (the list change it announces while initializing included), skipping the task-only one', () => {
    expect(harness.app.tools.names()).toEqual([
      'everything__echo',
      'everything__get-annotated-message',
      'everything__get-env',
      'everything__get-resource-links',
      'everything__get-resource-reference',
      'everything__get-structured-content',
      'everything__get-sum',
      'everything__get-tiny-image',
      'everything__gzip-file-as-resource',
      'everything__toggle-simulated-logging',
      'everything__toggle-subscriber-updates',
      'everything__trigger-long-running-operation',
    ])
    expect(harness.warnings).toEqual([
      {
        server: 'everything',
        code: 'TOOL_SKIPPED',
        message:
          'MCP tool "simulate-research-query" on server "everything" was not registered: it runs only as a task (execution.taskSupport "required"), which dsh-mcp does not support',
      },
    ])
  })

  it('runs its tools in a turn, with progress from the long-running one', async () => {
    const session = await harness.run('go')
    expect(results(session)).toEqual([
      { text: 'Echo: hello', isError: false },
      { text: 'The sum of 2 and 40 is 42.', isError: false },
      { text: '{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}', isError: false },
      {
        text: "Here's the image you requested:\n[image: image/png, 4033 bytes, not shown]\nThe image above is the MCP logo.",
        isError: false,
      },
      {
        text: expect.stringMatching(
          /^Returning resource reference for Resource 2:\n\[resource: demo:\/\/resource\/dynamic\/text\/2 \(text\/plain\)\]\nResource 2: This is a plaintext resource created at .+\nYou can access this resource using the URI: demo:\/\/resource\/dynamic\/text\/2$/,
        ),
        isError: false,
      },
      { text: 'Long running operation completed. Duration: 0.2 seconds, Steps: 4.', isError: false },
    ])
    const name = 'everything__trigger-long-running-operation'
    expect(harness.progress.map(({ agent, ...rest }) => ({ ...rest, agent: agent.id }))).toEqual(
      [1, 2, 3, 4].map((progress) => ({
        server: 'everything',
        tool: 'trigger-long-running-operation',
        name,
        callId: 'c6',
        agent: harness.progress[0]?.agent.id,
        progress,
        total: 4,
      })),
    )
    expect(harness.app.tools.get('everything__get-sum')?.schema).toEqual({
      name: 'everything__get-sum',
      description: 'Returns the sum of two numbers',
      parameters: {
        type: 'object',
        properties: {
          a: { type: 'number', description: 'First number' },
          b: { type: 'number', description: 'Second number' },
        },
        required: ['a', 'b'],
      },
    })
  })
})
