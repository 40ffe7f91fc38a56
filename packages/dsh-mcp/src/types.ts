/** The configuration and status types of dsh-mcp. */

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { Agent } from 'dsh-agent-loop'
import type { CallId } from 'dsh-llm'

/** A server run as a child process speaking MCP over its stdin/stdout. */
export interface StdioServerConfig {
  /** The executable (no shell): `node`, `uvx`, an absolute path, ... */
  readonly command: string
  readonly args?: readonly string[]
  /**
   * Added to the child's environment. The child does not inherit the whole parent environment,
   * only the SDK's safe default set (`HOME`, `PATH`, `SHELL`, `TERM`, `USER`, `LOGNAME`).
   */
  readonly env?: Readonly<Record<string, string>>
  /** Working directory of the child; default the parent's. */
  readonly cwd?: string
  /** Where the child's stderr goes: `inherit` (the parent's stderr, default) or `ignore`. */
  readonly stderr?: 'inherit' | 'ignore'
}

/** A server reached over Streamable HTTP. */
export interface HttpServerConfig {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string | URL
  /** Sent with every request (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * A server behind any SDK transport: an in-process `McpServer` over `InMemoryTransport`, a
 * WebSocket, ... `transport` is called for every connection attempt and must return a fresh,
 * unstarted transport.
 */
export interface CustomServerConfig {
  readonly transport: () => Transport
}

/** One MCP server: a child process (`command`), an HTTP endpoint (`url`) or a `transport` factory. */
export type McpServerConfig = StdioServerConfig | HttpServerConfig | CustomServerConfig

/** How a lost (or never reached) server is retried. */
export interface ReconnectOptions {
  /** Delay before the first retry, ms; doubles on each failed attempt. Default 250. */
  readonly initialDelayMs?: number
  /** The longest delay between attempts, ms. Default 30,000. */
  readonly maxDelayMs?: number
  /** Attempts in a row before the server is given up (`failed`). Default `Infinity`. */
  readonly maxAttempts?: number
}

/** Configuration of `McpTools`. */
export interface McpToolsConfig {
  /**
   * The servers, by name. A name is 1–32 characters: letters, digits and `-`, in runs joined by
   * single `_` (it becomes the prefix of its tools' names: `<server>__<tool>`).
   */
  readonly servers: Readonly<Record<string, McpServerConfig>>
  /**
   * How long one tool call may take, ms (a number > 0, `Infinity` for no limit). Past it the call
   * is cancelled on the server and its result is an `MCP_TIMEOUT` error. Default 60,000.
   */
  readonly timeoutMs?: number
  /**
   * How long connecting (spawn or HTTP, `initialize`, the first `tools/list`) may take, ms, before
   * the attempt counts as failed and is retried. Default 10,000.
   */
  readonly connectTimeoutMs?: number
  /**
   * Only tools matching one of these patterns are offered. A pattern matches `<server>/<tool>`
   * (the MCP names); `*` matches any run of characters. Default: every tool.
   */
  readonly include?: readonly string[]
  /** Tools matching one of these patterns (as `include`) are never offered. Applied after `include`. */
  readonly exclude?: readonly string[]
  /** Retry policy for lost servers and failed connects; `false` gives up after the first failure. */
  readonly reconnect?: ReconnectOptions | false
}

/** Closed: where a server's connection stands. */
export type McpServerState = 'connecting' | 'ready' | 'reconnecting' | 'failed' | 'closed'

/** A snapshot of one server's connection. */
export interface McpServerStatus {
  readonly server: string
  readonly state: McpServerState
  /** The dsh names of its tools on `ctx.tools` (empty unless `ready`). */
  readonly tools: readonly string[]
  /** Failed attempts since the last success. */
  readonly attempt: number
  /** Why the last attempt failed or the connection was lost. */
  readonly error?: string
  /** The child's process id, for a stdio server while it runs. */
  readonly pid?: number
}

/** A progress notification the server sent about a running tool call. */
export interface McpProgress {
  readonly server: string
  /** The MCP tool name. */
  readonly tool: string
  /** The dsh tool name the model called. */
  readonly name: string
  readonly callId: CallId
  readonly agent: Agent
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

/** Something dsh-mcp skipped or repaired instead of failing, reported on `mcp/warning`. */
export interface McpWarning {
  readonly server: string
  /** Stable: `TOOL_SKIPPED` (a tool could not be registered), `LIST_FAILED` (a re-sync failed). */
  readonly code: 'TOOL_SKIPPED' | 'LIST_FAILED'
  readonly message: string
}
