/** One MCP tool call from the loop: cancellation, timeout, progress, and the result as blocks. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Progress,
  type ProgressToken,
} from '@modelcontextprotocol/sdk/types.js'
import type { ToolExecuteContext, ToolReturn } from 'dsh-agent-loop'
import { resultBlocks } from './content.ts'
import { describeError, McpCallErrorCode } from './errors.ts'
import type { McpProgress } from './types.ts'

/** Progress listeners of one connection's calls in flight, by the token their request carries. */
export type ProgressRoutes = Map<ProgressToken, (progress: Progress) => void>

/** Where a call goes: the live client of its server, if any, and how to report a broken link. */
export interface CallLink {
  readonly server: string
  /** The connected client and its progress routes, or why there is none. */
  current():
    | { readonly client: Client; readonly progress: ProgressRoutes }
    | { readonly client?: undefined; readonly reason: string }
  /** The call failed below MCP (a transport error): the link should reconnect. */
  broken(client: Client, error: unknown): void
}

/** The tool being called. */
export interface CallTarget {
  /** The MCP tool name. */
  readonly tool: string
  /** The dsh tool name. */
  readonly name: string
}

let tokens = 0

/** setTimeout's largest delay; `Infinity` would fire at once. */
const MAX_TIMER_MS = 2_147_483_647

function failure(code: McpCallErrorCode, message: string): ToolReturn {
  return { content: `[${code}] ${message}`, isError: true }
}

/**
 * Calls `target` through `link` with `args`. The turn's signal becomes MCP cancellation (the SDK
 * sends `notifications/cancelled`), `timeoutMs` cancels the same way, each progress notification
 * goes to `onProgress`. Never throws: every failure is an error result whose text starts with an
 * `McpCallErrorCode` in brackets; a result with `isError` keeps its content and is an error result.
 */
export async function callTool(
  link: CallLink,
  target: CallTarget,
  args: Record<string, unknown>,
  context: ToolExecuteContext,
  timeoutMs: number,
  onProgress: (progress: McpProgress) => void,
): Promise<ToolReturn> {
  const where = `MCP tool "${target.tool}" on server "${link.server}"`
  const current = link.current()
  if (current.client === undefined) {
    return failure(McpCallErrorCode.SERVER_UNAVAILABLE, `${where} was not called: ${current.reason}`)
  }
  const { client } = current
  const token = `dsh-${++tokens}`
  current.progress.set(token, (progress) =>
    onProgress({
      server: link.server,
      tool: target.tool,
      name: target.name,
      callId: context.callId,
      agent: context.agent,
      progress: progress.progress,
      ...(progress.total === undefined ? {} : { total: progress.total }),
      ...(progress.message === undefined ? {} : { message: progress.message }),
    }),
  )
  let result: CallToolResult
  try {
    result = (await client.callTool(
      { name: target.tool, arguments: args, _meta: { progressToken: token } },
      undefined,
      { signal: context.signal, timeout: Math.min(timeoutMs, MAX_TIMER_MS) },
    )) as CallToolResult
  } catch (error) {
    if (context.signal.aborted) {
      return failure(
        McpCallErrorCode.CANCELLED,
        `${where} was cancelled: ${describeError(context.signal.reason)}`,
      )
    }
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) {
        return failure(
          McpCallErrorCode.TIMEOUT,
          `${where} did not finish within ${timeoutMs} ms and was cancelled`,
        )
      }
      if (error.code === ErrorCode.ConnectionClosed) {
        return failure(
          McpCallErrorCode.CONNECTION_LOST,
          `${where}: the connection closed during the call (${error.message})`,
        )
      }
      return failure(McpCallErrorCode.PROTOCOL_ERROR, `${where} failed: ${error.message}`)
    }
    link.broken(client, error)
    return failure(
      McpCallErrorCode.CONNECTION_LOST,
      `${where}: the transport failed during the call (${describeError(error)})`,
    )
  } finally {
    // Notifications are handled a microtask after they are read, so one read just before the
    // result still finds its route: drop it after that.
    queueMicrotask(() => current.progress.delete(token))
  }
  const content = resultBlocks(result)
  return result.isError === true ? { content, isError: true } : content
}
