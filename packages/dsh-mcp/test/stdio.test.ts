import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { userText } from 'dsh-llm'
import { hangUntilAborted, textResponse, toolCallResponse } from 'dsh-llm/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMcpHarness, fixture, headerTools, type McpHarness, results, until } from './harness.ts'

let harness: McpHarness | undefined
let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-mcp-'))
})
afterEach(async () => {
  await harness?.close()
  harness = undefined
  rmSync(dir, { recursive: true, force: true })
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function serverLog(): string[] {
  try {
    return readFileSync(join(dir, 'server.log'), 'utf8').trim().split('\n')
  } catch {
    return []
  }
}

const demo = () => ({
  command: process.execPath,
  args: [fixture('stdio-server.mjs')],
  env: { DEMO_LOG: join(dir, 'server.log') },
})

describe('McpTools over stdio', () => {
  it('a SIGKILLed server: the call in flight gets an error result, the turn goes on, the next call reconnects', async () => {
    harness = await createMcpHarness({ servers: { demo: demo() }, reconnect: { initialDelayMs: 50 } }, [
      toolCallResponse('c1', 'demo__slow', { steps: 1 }),
      toolCallResponse('c2', 'demo__echo', { text: 'again' }),
      textResponse('done'),
    ])
    const { app } = harness
    await app.mcp.whenReady('demo')
    const first = app.mcp.status('demo').pid
    if (first === undefined) throw new Error('no pid')
    app.on('tools/post-execute', async (input, next) => {
      const output = await next()
      // The failed call's result is in; let the backoff reconnect before the model's next step.
      if (input.call.name === 'demo__slow') await app.mcp.whenReady('demo', { timeoutMs: 10_000 })
      return output
    })
    const turn = harness.run('go')
    await until(() => serverLog().includes('waiting:slow'), 'the slow call to start')
    process.kill(first, 'SIGKILL')
    const session = await turn
    expect(results(session)).toEqual([
      {
        text: '[MCP_CONNECTION_LOST] MCP tool "slow" on server "demo": the connection closed during the call (MCP error -32000: Connection closed)',
        isError: true,
      },
      { text: 'echo: again', isError: false },
    ])
    const second = app.mcp.status('demo').pid
    expect(second).toBeDefined()
    expect(second).not.toBe(first)
    expect(alive(first)).toBe(false)
    expect(harness.statuses.map((status) => [status.state, status.tools.length, status.error ?? ''])).toEqual(
      [
        ['connecting', 0, ''],
        ['ready', 8, ''],
        ['reconnecting', 0, 'the connection closed'],
        ['ready', 8, ''],
      ],
    )
    // The tools were gone while the server was down, and came back under the same names.
    const headers = headerTools(session)
    expect(headers.map((header) => header.reason)).toEqual(['initial'])
    expect(headers[0]?.tools).toEqual(app.tools.names())
    await harness.close()
    expect(second === undefined ? true : alive(second)).toBe(false)
    expect(app.tools.names()).toEqual([])
  })

  it('cancelling the turn mid-call sends notifications/cancelled: the server sees its request aborted', async () => {
    harness = await createMcpHarness({ servers: { demo: demo() } }, [
      toolCallResponse('c1', 'demo__slow', { steps: 2 }),
      hangUntilAborted(),
    ])
    const { app } = harness
    await app.mcp.whenReady('demo')
    const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
    agent.send(userText('go'))
    // Both progress notifications have reached the client (the server sends them before it waits).
    await until(
      () => serverLog().includes('waiting:slow') && harness?.progress.length === 2,
      'the slow call to start and report progress',
    )
    agent.cancel('user pressed stop')
    await agent.whenIdle()
    await until(
      () => serverLog().some((line) => line.startsWith('cancelled:slow')),
      'the server to see the cancellation',
    )
    expect(serverLog()).toEqual([
      'called:slow',
      'waiting:slow',
      'cancelled:slow:AgentLoopError: turn cancelled: user pressed stop',
    ])
    expect(results(agent.session)).toEqual([
      {
        text: '[MCP_CANCELLED] MCP tool "slow" on server "demo" was cancelled: turn cancelled: user pressed stop',
        isError: true,
      },
    ])
    expect(
      harness.progress.map(({ server, tool, name, callId, progress, total, message }) => ({
        server,
        tool,
        name,
        callId,
        progress,
        total,
        message,
      })),
    ).toEqual([
      {
        server: 'demo',
        tool: 'slow',
        name: 'demo__slow',
        callId: 'c1',
        progress: 1,
        total: 2,
        message: 'step 1',
      },
      {
        server: 'demo',
        tool: 'slow',
        name: 'demo__slow',
        callId: 'c1',
        progress: 2,
        total: 2,
        message: 'step 2',
      },
    ])
    // The server stays connected: the cancellation was a notification, not a hang-up.
    expect(app.mcp.status('demo').state).toBe('ready')
    await agent.dispose()
  })

  it('a server that never answers initialize does not hold up the app, is given up after connectTimeoutMs and reaped', async () => {
    const started = Date.now()
    harness = await createMcpHarness(
      {
        servers: { silent: { command: process.execPath, args: [fixture('silent-server.mjs')] } },
        connectTimeoutMs: 300,
        reconnect: false,
      },
      [textResponse('no tools needed')],
    )
    expect(Date.now() - started).toBeLessThan(300)
    expect(harness.app.mcp.status('silent').state).toBe('connecting')
    const pid = harness.app.mcp.status('silent').pid
    const session = await harness.run('hi')
    expect(headerTools(session)).toEqual([{ reason: 'initial', tools: [] }])
    await expect(harness.app.mcp.whenReady('silent')).rejects.toMatchObject({
      code: 'SERVER_UNAVAILABLE',
      message: 'MCP server "silent" gave up: connecting failed: MCP error -32001: Request timed out',
    })
    expect(pid === undefined ? false : alive(pid)).toBe(false)
  })
})
