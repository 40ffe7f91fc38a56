/** One server's tools on `ctx.tools`, swapped as a whole. */
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ToolExecuteContext, ToolRegistry, ToolReturn } from 'dsh-agent-loop'
import type { JsonSchema } from 'dsh-llm'
import { describeError } from './errors.ts'
import { toolNames } from './names.ts'
import type { McpWarning } from './types.ts'

/** What a `ServerToolSet` needs from its plugin. */
export interface ToolSetHost {
  readonly server: string
  readonly registry: ToolRegistry
  /** Whether the `include`/`exclude` patterns let this MCP tool through. */
  accepts(server: string, tool: string): boolean
  /** The body of the dsh tool `name` that calls MCP tool `tool`. */
  execute(
    tool: string,
    name: string,
    args: Record<string, unknown>,
    context: ToolExecuteContext,
  ): Promise<ToolReturn>
  warn(warning: McpWarning): void
}

/** The JSON Schema offered for an MCP tool's `inputSchema`: the schema without its root `$id`. */
function parameters(tool: Tool): JsonSchema {
  const { $id: _id, ...schema } = tool.inputSchema as Record<string, unknown>
  return schema as JsonSchema
}

/**
 * The registered tools of one server. `replace` swaps the whole set synchronously (so no model
 * request sees half of it) and does nothing when the offered names, descriptions and schemas are
 * unchanged; `clear` unregisters them all.
 */
export class ServerToolSet {
  private disposers: Array<() => void> = []
  private registered: readonly string[] = []
  private signature = '[]'

  constructor(private readonly host: ToolSetHost) {}

  /** The dsh names currently registered, in the server's order. */
  get names(): readonly string[] {
    return this.registered
  }

  /**
   * Makes `tools` (as the server listed them, filtered by `include`/`exclude`) the server's set.
   * A tool that cannot be registered (its name is taken by another plugin's tool, its schema does
   * not compile, it runs only as an MCP task) is skipped with an `mcp/warning` `TOOL_SKIPPED`. Returns whether the set changed.
   */
  replace(tools: readonly Tool[]): boolean {
    const { server } = this.host
    const accepted = tools.filter((tool) => {
      if (!this.host.accepts(server, tool.name)) return false
      if (tool.execution?.taskSupport !== 'required') return true
      this.host.warn({
        server,
        code: 'TOOL_SKIPPED',
        message: `MCP tool "${tool.name}" on server "${server}" was not registered: it runs only as a task (execution.taskSupport "required"), which dsh-mcp does not support`,
      })
      return false
    })
    const names = toolNames(
      server,
      accepted.map((tool) => tool.name),
    )
    const offered = accepted.map((tool, i) => ({
      tool: tool.name,
      name: names[i] ?? '',
      description: tool.description ?? tool.title ?? '',
      parameters: parameters(tool),
    }))
    const signature = JSON.stringify(offered)
    if (signature === this.signature) return false
    this.clear()
    const registered: string[] = []
    for (const entry of offered) {
      const { tool, name } = entry
      try {
        this.disposers.push(
          this.host.registry.register({
            name,
            description: entry.description,
            parameters: entry.parameters,
            execute: (args, context) => this.host.execute(tool, name, args, context),
          }),
        )
        registered.push(name)
      } catch (error) {
        this.host.warn({
          server,
          code: 'TOOL_SKIPPED',
          message: `MCP tool "${tool}" on server "${server}" was not registered as "${name}": ${describeError(error)}`,
        })
      }
    }
    this.registered = Object.freeze(registered)
    this.signature = signature
    return true
  }

  /** Unregisters every tool of the server. */
  clear(): void {
    const disposers = this.disposers
    this.disposers = []
    this.registered = Object.freeze([])
    this.signature = '[]'
    for (const dispose of disposers) dispose()
  }
}
