/** The `McpTools` plugin: `ctx.mcp`, one `ServerLink` per configured server. */
import { type Context, Service } from 'cordis'
import type {} from 'dsh-agent-loop'
import { emitContained } from 'dsh-llm'
import { callTool } from './call.ts'
import { resolveConfig } from './config.ts'
import { ServerLink } from './connection.ts'
import { McpErrorCode, McpToolsError } from './errors.ts'
import type {} from './events.ts'
import { ServerToolSet } from './tool-set.ts'
import type { McpServerStatus, McpToolsConfig, McpWarning } from './types.ts'

declare module 'cordis' {
  interface Context {
    mcp: McpToolsService
  }
}

/** Options of `whenReady`. */
export interface WhenReadyOptions {
  /** Give up after this long, ms (rejects `TIMEOUT`). Default: wait as long as it takes. */
  readonly timeoutMs?: number
}

/**
 * The MCP service (`ctx.mcp`). On start it connects to every configured server in the background
 * (never holding up the app); each server's tools are registered on `ctx.tools` as
 * `<server>__<tool>` while it is connected. Unloading the plugin closes every connection and reaps
 * every stdio child.
 */
export class McpToolsService extends Service {
  static inject = ['tools']

  private readonly links = new Map<string, ServerLink>()

  constructor(ctx: Context, config: McpToolsConfig) {
    super(ctx, 'mcp')
    const options = resolveConfig(config)
    const registry = ctx.tools
    const report = (status: McpServerStatus) => emitContained(ctx, 'mcp/status', [status])
    const warn = (warning: McpWarning) => emitContained(ctx, 'mcp/warning', [warning])
    for (const [server, serverConfig] of options.servers) {
      const link: ServerLink = new ServerLink({
        server,
        config: serverConfig,
        options,
        report,
        warn,
        tools: new ServerToolSet({
          server,
          registry,
          accepts: options.accepts,
          warn,
          execute: (tool, name, args, context) =>
            callTool(link, { tool, name }, args, context, options.timeoutMs, (progress) =>
              emitContained(ctx, 'mcp/progress', [progress]),
            ),
        }),
      })
      this.links.set(server, link)
    }
    const links = this.links
    ctx.effect(() => {
      for (const link of links.values()) link.start()
      return () => Promise.all([...links.values()].map((link) => link.close())).then(() => undefined)
    }, 'mcp servers')
  }

  /** The configured server names, in configuration order. */
  servers(): readonly string[] {
    return Object.freeze([...this.links.keys()])
  }

  /** A snapshot of server `server`'s connection. Throws `UNKNOWN_SERVER` for a name not configured. */
  status(server: string): McpServerStatus {
    return this.link('mcp.status', server).status()
  }

  /**
   * Resolves once `server` (every server when left out) is `ready` — at once if it is. Rejects with
   * `SERVER_UNAVAILABLE` when a server gives up (`failed`), `DISPOSED` when the plugin unloads,
   * `TIMEOUT` past `options.timeoutMs`, `UNKNOWN_SERVER` for a name not configured.
   */
  async whenReady(server?: string, options: WhenReadyOptions = {}): Promise<void> {
    const links = server === undefined ? [...this.links.values()] : [this.link('mcp.whenReady', server)]
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs
    await Promise.all(links.map((link) => ready(link, deadline)))
  }

  private link(where: string, server: string): ServerLink {
    const link = this.links.get(server)
    if (link !== undefined) return link
    const known = [...this.links.keys()].map((name) => JSON.stringify(name)).join(', ') || 'none'
    throw new McpToolsError(
      McpErrorCode.UNKNOWN_SERVER,
      `${where}: no MCP server ${JSON.stringify(server)} is configured (configured: ${known})`,
    )
  }
}

function ready(link: ServerLink, deadline: number | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    let cancel = () => {}
    const check = () => {
      const { state, error } = link.status()
      if (state === 'ready') return settle(resolve)
      if (state === 'failed') {
        const why = error === undefined ? '' : `: ${error}`
        return settle(() =>
          reject(
            new McpToolsError(McpErrorCode.SERVER_UNAVAILABLE, `MCP server "${link.server}" gave up${why}`),
          ),
        )
      }
      if (state === 'closed') {
        return settle(() =>
          reject(
            new McpToolsError(
              McpErrorCode.DISPOSED,
              `MCP server "${link.server}" was closed (McpTools unloaded)`,
            ),
          ),
        )
      }
      cancel = link.onChange(check)
    }
    const settle = (done: () => void) => {
      clearTimeout(timer)
      cancel()
      done()
    }
    if (deadline !== undefined) {
      timer = setTimeout(
        () =>
          settle(() =>
            reject(
              new McpToolsError(
                McpErrorCode.TIMEOUT,
                `MCP server "${link.server}" was not ready in time (${link.status().state})`,
              ),
            ),
          ),
        Math.max(0, deadline - Date.now()),
      )
    }
    check()
  })
}

/**
 * The McpTools plugin: `await app.plugin(McpTools, {servers: {...}})` provides `ctx.mcp` and starts
 * connecting to the servers without waiting for them (`await app.mcp.whenReady()` does). Mount
 * `ToolRegistry` first: without it, rejects with `McpToolsError` `MISSING_PLUGIN`; a bad config
 * rejects with `INVALID_CONFIG`.
 */
export const McpTools = {
  name: 'McpTools',
  async apply(ctx: Context, config: McpToolsConfig): Promise<void> {
    if (ctx.reflect.get('tools', false) === undefined) {
      throw new McpToolsError(
        McpErrorCode.MISSING_PLUGIN,
        'McpTools needs ctx.tools, which the ToolRegistry plugin (dsh-agent-loop) provides: await app.plugin(ToolRegistry) before app.plugin(McpTools)',
      )
    }
    resolveConfig(config)
    await ctx.plugin(McpToolsService, config)
  },
}
