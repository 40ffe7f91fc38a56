import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { checkSessionFile, readRecordedLog } from 'dsh-invariants'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import { toolNames } from 'dsh-mcp'
import { JsonlStorage } from 'dsh-session'
import { afterEach, describe, expect, it } from 'vitest'
import { createDemoServer, createMcpHarness, fixture, type McpHarness, results } from './harness.ts'

let harness: McpHarness | undefined
let dir: string | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** The demo server's tools as a plain SDK client lists them, named as dsh-mcp names them. */
async function serverTools(): Promise<string[]> {
  const client = new Client({ name: 'reference', version: '1.0.0' })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await createDemoServer().connect(serverSide)
  await client.connect(clientSide)
  const { tools } = await client.listTools()
  await client.close()
  return toolNames(
    'demo',
    tools.map((tool) => tool.name),
  )
}

describe('a session on MCP tools, resumed in a fresh process', () => {
  it('runs a turn with every invariant mounted; the child resumes it and both logged tool sets are the server’s', async () => {
    dir = mkdtempSync(join(tmpdir(), 'dsh-mcp-resume-'))
    const server = { command: process.execPath, args: [fixture('stdio-server.mjs')] }
    harness = await createMcpHarness(
      { servers: { demo: server } },
      [toolCallResponse('c1', 'demo__echo', { text: 'first' }), textResponse('ok')],
      { storage: new JsonlStorage({ dir }) },
    )
    await harness.app.mcp.whenReady('demo')
    const session = await harness.run('go')
    expect(results(session)).toEqual([{ text: 'echo: first', isError: false }])
    const id = session.id
    await harness.app.sessions.close(session)
    await harness.close()
    harness = undefined

    const { stdout } = await promisify(execFile)(
      process.execPath,
      [fixture('resume-child.mjs'), dir, id, fixture('stdio-server.mjs')],
      { cwd: fixture('.'), timeout: 30_000 },
    )
    const expected = await serverTools()
    expect(JSON.parse(stdout)).toEqual({ tools: expected, text: 'resumed', stop: 'completed', violations: 0 })

    const file = join(dir, `${id}.jsonl`)
    const log = readRecordedLog(file)
    const headers = log.events
      .filter((event) => event.type === 'request/header')
      .map((event) => {
        const data = event.data as { reason: string; header: { tools?: ReadonlyArray<{ name: string }> } }
        return { reason: data.reason, tools: (data.header.tools ?? []).map((tool) => tool.name) }
      })
    expect(headers).toEqual([
      { reason: 'initial', tools: expected },
      { reason: 'resume', tools: expected },
    ])
    const check = await checkSessionFile(file)
    expect(check.violations).toEqual([])
  })
})
