/** The SDK transport for a server config: a child process over stdio, or Streamable HTTP. */
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { McpServerConfig } from './types.ts'

/** A transport, and the stdio child's pid while it runs. */
export interface ServerTransport {
  readonly transport: Transport
  pid(): number | undefined
  /** Ends an HTTP session politely (`DELETE`); nothing for stdio. Never rejects. */
  terminate(): Promise<void>
}

/** A fresh, unstarted transport for `config` (validated by `resolveConfig`). */
export function createTransport(config: McpServerConfig): ServerTransport {
  if ('transport' in config) {
    return { transport: config.transport(), pid: () => undefined, terminate: async () => {} }
  }
  if ('command' in config) {
    const transport = new StdioClientTransport({
      command: config.command,
      ...(config.args === undefined ? {} : { args: [...config.args] }),
      ...(config.env === undefined ? {} : { env: { ...config.env } }),
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      stderr: config.stderr ?? 'inherit',
    })
    return { transport, pid: () => transport.pid ?? undefined, terminate: async () => {} }
  }
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
  }
}
