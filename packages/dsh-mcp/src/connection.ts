/**
 * One server's connection: connect in the background with a deadline, keep the tool set in step
 * with `tools/list_changed`, and on a lost connection unregister the tools and retry with backoff.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  type Progress,
  ProgressNotificationSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { CallLink, ProgressRoutes } from './call.ts'
import type { ResolvedConfig } from './config.ts'
import { describeError } from './errors.ts'
import type { ServerToolSet } from './tool-set.ts'
import { createTransport, type ServerTransport } from './transport.ts'
import type { McpServerConfig, McpServerState, McpServerStatus, McpWarning } from './types.ts'

/** The client name and version dsh-mcp announces in `initialize`. */
export const CLIENT_INFO = { name: 'dsh-mcp', version: '0.1.0' } as const

/** How long a stdio child that is still running after the SDK closed it gets after `SIGTERM`. */
const REAP_GRACE_MS = 1_000

/** What a `ServerLink` needs from its plugin. */
export interface LinkHost {
  readonly server: string
  readonly config: McpServerConfig
  readonly options: ResolvedConfig
  readonly tools: ServerToolSet
  report(status: McpServerStatus): void
  warn(warning: McpWarning): void
}

interface Live {
  readonly client: Client
  readonly transport: ServerTransport
  readonly progress: ProgressRoutes
}

/** Every tool of `client`'s server, following `nextCursor` pages. */
async function listAll(client: Client, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout })
    tools.push(...page.tools)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

/** The connection to one MCP server, from `start()` to `close()`. */
export class ServerLink implements CallLink {
  private state: McpServerState = 'connecting'
  private attempt = 0
  private error: string | undefined
  private live: Live | undefined
  private connecting: Live | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false
  private syncing = false
  private resyncAgain = false
  private readonly waiters = new Set<() => void>()
  /** Stops of connections already given up, which `close()` still waits for. */
  private readonly stopping = new Set<Promise<void>>()

  constructor(private readonly host: LinkHost) {}

  get server(): string {
    return this.host.server
  }

  /** Reports `connecting` and starts the first connection attempt in the background. */
  start(): void {
    this.host.report(this.status())
    void this.connect()
  }

  /** A snapshot of the connection. */
  status(): McpServerStatus {
    const pid = (this.live ?? this.connecting)?.transport.pid()
    return Object.freeze({
      server: this.host.server,
      state: this.state,
      tools: this.host.tools.names,
      attempt: this.attempt,
      ...(this.error === undefined ? {} : { error: this.error }),
      ...(pid === undefined ? {} : { pid }),
    })
  }

  /** Calls `wake` on the next state change (once). Returns a canceller. */
  onChange(wake: () => void): () => void {
    this.waiters.add(wake)
    return () => this.waiters.delete(wake)
  }

  current(): { readonly client: Client; readonly progress: ProgressRoutes } | { readonly reason: string } {
    if (this.live !== undefined) return { client: this.live.client, progress: this.live.progress }
    const why = this.error === undefined ? '' : ` (${this.error})`
    return { reason: `the server is ${this.state}${why}` }
  }

  broken(client: Client, error: unknown): void {
    this.lost(client, `transport failed: ${describeError(error)}`)
  }

  /** Stops retrying, unregisters the tools and closes the connection (a stdio child is reaped). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.timer)
    this.host.tools.clear()
    const targets = [this.live, this.connecting].filter((live) => live !== undefined)
    this.live = undefined
    this.connecting = undefined
    this.setState('closed', undefined)
    await Promise.all([
      ...targets.map(async ({ client, transport }) => {
        await transport.terminate()
        await client.close().catch(() => {})
        await transport.reap(REAP_GRACE_MS)
      }),
      ...this.stopping,
    ])
  }

  /** Runs `stop` (closing a connection given up) so that `close()` waits for it too. */
  private track(stop: Promise<void>): Promise<void> {
    this.stopping.add(stop)
    return stop.finally(() => this.stopping.delete(stop))
  }

  private setState(state: McpServerState, error: string | undefined): void {
    this.state = state
    this.error = error
    this.host.report(this.status())
    const waiters = [...this.waiters]
    this.waiters.clear()
    for (const wake of waiters) wake()
  }

  private async connect(): Promise<void> {
    if (this.closed) return
    let transport: ServerTransport
    try {
      transport = createTransport(this.host.config)
    } catch (error) {
      this.retry(`creating the transport failed: ${describeError(error)}`)
      return
    }
    const client = new Client({ ...CLIENT_INFO }, { capabilities: {} })
    const progress: ProgressRoutes = new Map()
    const attempt: Live = { client, transport, progress }
    this.connecting = attempt
    // Routed here instead of through the SDK's `onprogress`, which drops a notification that
    // arrives in the same read as its call's result (the result unregisters it first).
    client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
      const { progressToken, ...rest } = notification.params
      progress.get(progressToken)?.(rest as Progress)
    })
    let changed = false
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.live?.client === client) void this.resync(client)
      else changed = true
    })
    client.onclose = () => this.lost(client, 'the connection closed')
    const timeout = this.host.options.connectTimeoutMs
    let tools: Tool[]
    try {
      await client.connect(transport.transport, { timeout })
      tools = await listAll(client, timeout)
    } catch (error) {
      if (this.connecting !== attempt) return
      this.connecting = undefined
      // A server that failed to start properly gets no grace period.
      await this.track(
        client
          .close()
          .catch(() => {})
          .then(() => transport.reap(0)),
      )
      this.retry(`connecting failed: ${describeError(error)}`)
      return
    }
    if (this.connecting !== attempt) return
    this.connecting = undefined
    this.live = attempt
    this.attempt = 0
    this.host.tools.replace(tools)
    this.setState('ready', undefined)
    if (changed) void this.resync(client)
  }

  private lost(client: Client, reason: string): void {
    const live = this.live
    if (this.closed || live?.client !== client) return
    const { transport } = live
    this.live = undefined
    this.host.tools.clear()
    void this.track(
      client
        .close()
        .catch(() => {})
        .then(() => transport.reap(REAP_GRACE_MS)),
    )
    this.retry(reason)
  }

  /** Schedules the next attempt with backoff, or gives up (`failed`) past `maxAttempts`. */
  private retry(reason: string): void {
    if (this.closed) return
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.host.options.reconnect
    if (this.attempt >= maxAttempts) {
      this.setState('failed', reason)
      return
    }
    const delay = Math.min(maxDelayMs, initialDelayMs * 2 ** this.attempt)
    this.attempt++
    this.setState('reconnecting', reason)
    this.timer = setTimeout(() => void this.connect(), delay)
    this.timer.unref()
  }

  /**
   * Re-fetches the tool list after `tools/list_changed` and swaps the set in one piece. Runs one
   * fetch at a time; a change announced during a fetch starts another. A failed fetch keeps the
   * current set and reports `mcp/warning` `LIST_FAILED`.
   */
  private async resync(client: Client): Promise<void> {
    if (this.syncing) {
      this.resyncAgain = true
      return
    }
    this.syncing = true
    try {
      do {
        this.resyncAgain = false
        let tools: Tool[]
        try {
          tools = await listAll(client, this.host.options.connectTimeoutMs)
        } catch (error) {
          if (this.live?.client === client) {
            this.host.warn({
              server: this.host.server,
              code: 'LIST_FAILED',
              message: `re-listing the tools of MCP server "${this.host.server}" failed; its previous tools stay: ${describeError(error)}`,
            })
          }
          continue
        }
        if (this.closed || this.live?.client !== client) return
        if (this.host.tools.replace(tools)) this.host.report(this.status())
      } while (this.resyncAgain)
    } finally {
      this.syncing = false
    }
  }
}
