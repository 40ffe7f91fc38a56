/** The SDK transport for a server config: a child process over stdio, Streamable HTTP, or a factory. */
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { McpServerConfig } from './types.ts'

/** A transport, and the stdio child's pid and reaping. */
export interface ServerTransport {
  readonly transport: Transport
  /** The stdio child's pid once spawned, until it is reaped. */
  pid(): number | undefined
  /** Ends an HTTP session politely (`DELETE`); nothing for other transports. Never rejects. */
  terminate(): Promise<void>
  /**
   * Makes sure the stdio child is gone (call after `client.close()`): a child still running gets
   * `SIGTERM`, then `SIGKILL` after `graceMs`. Resolves once it has exited. Never rejects.
   */
  reap(graceMs: number): Promise<void>
}

const POLL_MS = 10

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function exited(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs
  while (alive(pid)) {
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
  return true
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // Gone already.
  }
}

const nothing = async () => {}

function stdio(config: Extract<McpServerConfig, { command: string }>): ServerTransport {
  const transport = new StdioClientTransport({
    command: config.command,
    ...(config.args === undefined ? {} : { args: [...config.args] }),
    ...(config.env === undefined ? {} : { env: { ...config.env } }),
    ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
    stderr: config.stderr ?? 'inherit',
  })
  // The SDK forgets the child when it starts closing it (also on its own, after a failed
  // `initialize`), so the pid is kept here to reap the child whatever the SDK did.
  let pid: number | undefined
  const start = transport.start.bind(transport)
  transport.start = async () => {
    try {
      await start()
    } finally {
      pid = transport.pid ?? undefined
    }
  }
  return {
    transport,
    pid: () => (pid !== undefined && alive(pid) ? pid : undefined),
    terminate: nothing,
    reap: async (graceMs) => {
      if (pid === undefined || !alive(pid)) return
      signal(pid, 'SIGTERM')
      if (await exited(pid, graceMs)) return
      signal(pid, 'SIGKILL')
      await exited(pid, 5_000)
    },
  }
}

function http(config: Extract<McpServerConfig, { url: string | URL }>): ServerTransport {
  const transport = new StreamableHTTPClientTransport(new URL(String(config.url)), {
    ...(config.headers === undefined ? {} : { requestInit: { headers: { ...config.headers } } }),
  })
  return {
    transport,
    pid: () => undefined,
    terminate: async () => {
      if (transport.sessionId === undefined) return
      try {
        await transport.terminateSession()
      } catch {
        // The server may be gone already; closing is what matters.
      }
    },
    reap: nothing,
  }
}

/** A fresh, unstarted transport for `config` (validated by `resolveConfig`). Throws what a factory throws. */
export function createTransport(config: McpServerConfig): ServerTransport {
  if ('transport' in config) {
    return { transport: config.transport(), pid: () => undefined, terminate: nothing, reap: nothing }
  }
  return 'command' in config ? stdio(config) : http(config)
}
