import { HarnessError } from 'dsh-llm'

/** Stable error codes of dsh-mcp. Route on these, never on message text. */
export const McpErrorCode = {
  /** `McpTools` was given an invalid configuration (a bad server name, command, url or option). */
  INVALID_CONFIG: 'INVALID_CONFIG',
  /** A plugin dsh-mcp needs (`ToolRegistry`) is not mounted. */
  MISSING_PLUGIN: 'MISSING_PLUGIN',
  /** `whenReady` named a server that is not configured. */
  UNKNOWN_SERVER: 'UNKNOWN_SERVER',
  /** A server could not be reached, or gave up reconnecting (`reconnect.maxAttempts`). */
  SERVER_UNAVAILABLE: 'SERVER_UNAVAILABLE',
  /** The plugin was disposed while something waited on it. */
  DISPOSED: 'DISPOSED',
  /** `whenReady` gave up waiting (its `timeoutMs`). */
  TIMEOUT: 'TIMEOUT',
} as const

/** One of dsh-mcp's error codes. */
export type McpErrorCode = (typeof McpErrorCode)[keyof typeof McpErrorCode]

/** An error of dsh-mcp. The message names the server (and tool) involved. */
export class McpToolsError extends HarnessError {
  override readonly code: McpErrorCode
  constructor(code: McpErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options)
    this.name = 'McpToolsError'
    this.code = code
  }
}

/**
 * The codes that start an MCP tool call's error result (`[<code>] ...`), so the model, a
 * `tools/post-execute` listener and a log reader can tell the failures apart.
 */
export const McpCallErrorCode = {
  /** The server is not connected (starting, reconnecting, or gave up): the call was not sent. */
  SERVER_UNAVAILABLE: 'MCP_SERVER_UNAVAILABLE',
  /** The connection closed (the server crashed or exited) while the call was in flight. */
  CONNECTION_LOST: 'MCP_CONNECTION_LOST',
  /** The call did not finish within `timeoutMs`; the server was sent `notifications/cancelled`. */
  TIMEOUT: 'MCP_TIMEOUT',
  /** The turn was cancelled; the server was sent `notifications/cancelled`. */
  CANCELLED: 'MCP_CANCELLED',
  /** The server answered the call with a JSON-RPC error (unknown tool, invalid params, ...). */
  PROTOCOL_ERROR: 'MCP_PROTOCOL_ERROR',
} as const

/** One of the codes of an MCP tool call's error result. */
export type McpCallErrorCode = (typeof McpCallErrorCode)[keyof typeof McpCallErrorCode]

/** The message of `error`, or its string form. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
