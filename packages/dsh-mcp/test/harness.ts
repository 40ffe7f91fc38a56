/** Test harness: the whole stack with every invariant check, a scripted model and McpTools. */
import { fileURLToPath } from 'node:url'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { Context } from 'cordis'
import AgentLoop, { ToolRegistry } from 'dsh-agent-loop'
import { createCheckedApp, installInvariantGuard } from 'dsh-invariants/vitest'
import type { ToolResultMessage } from 'dsh-llm'
import { type ScriptedAdapter, type ScriptStep, scriptedAdapter } from 'dsh-llm/testing'
import McpTools, {
  type McpProgress,
  type McpServerStatus,
  type McpToolsConfig,
  type McpWarning,
} from 'dsh-mcp'
import type { Session, SessionsConfig } from 'dsh-session'
// @ts-expect-error: a plain ES module fixture without types; its one export is typed below.
import { createDemoServer as untypedDemoServer } from './fixtures/demo-server.mjs'

installInvariantGuard()

/** The demo server of `fixtures/demo-server.mjs`. */
export const createDemoServer = untypedDemoServer as (record?: (line: string) => void) => {
  connect(transport: Transport): Promise<void>
  close(): Promise<void>
}

/** Path of a file in `fixtures/`. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
}

/** A transport factory serving a fresh in-process demo server per connection; `lines` collects its records. */
export function inMemoryDemo(lines: string[]): () => Transport {
  return () => {
    const [client, server] = InMemoryTransport.createLinkedPair()
    void createDemoServer((line) => lines.push(line)).connect(server)
    return client
  }
}

export interface McpHarness {
  readonly app: Context
  readonly model: ScriptedAdapter
  readonly statuses: McpServerStatus[]
  readonly progress: McpProgress[]
  readonly warnings: McpWarning[]
  /** Unloads McpTools (closing every server), once. */
  close(): Promise<void>
  /** Runs one prompt on a new agent and returns its session once idle. */
  run(prompt: string): Promise<Session>
}

/** Mounts LlmRuntime, Sessions, every invariant check, ToolRegistry, AgentLoop and McpTools(`config`). */
export async function createMcpHarness(
  config: McpToolsConfig,
  script: readonly ScriptStep[] = [],
  sessions: SessionsConfig = {},
): Promise<McpHarness> {
  const app = await createCheckedApp({ sessions })
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop, { abortGraceMs: 2_000 })
  const statuses: McpServerStatus[] = []
  const progress: McpProgress[] = []
  const warnings: McpWarning[] = []
  app.on('mcp/status', (status) => statuses.push(status))
  app.on('mcp/progress', (event) => progress.push(event))
  app.on('mcp/warning', (warning) => warnings.push(warning))
  const fiber = app.plugin(McpTools, config)
  await fiber
  let closed: Promise<void> | undefined
  const model = scriptedAdapter(script)
  app.llm.registerAdapter('test', model)
  return {
    app,
    model,
    statuses,
    progress,
    warnings,
    close: () => {
      closed ??= Promise.resolve(fiber.dispose()).then(() => undefined)
      return closed
    },
    run: async (prompt) => {
      const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
      await agent.prompt(prompt)
      return agent.session
    },
  }
}

/** One logged tool result, flattened: its text parts joined by `\n`, and whether it is an error. */
export interface ResultRow {
  readonly text: string
  readonly isError: boolean
}

/** Every `tool/result` of `session`, in order. */
export function results(session: Session): ResultRow[] {
  return session.events
    .filter((event) => event.type === 'tool/result')
    .map((event) => {
      const block = (event.data as { message: ToolResultMessage }).message.content[0]
      const text = block.content
        .map((part) => (part.type === 'text' ? part.text : `<${part.type}>`))
        .join('\n')
      return { text, isError: block.isError === true }
    })
}

/** The tool names of every logged `request/header`, with its reason. */
export function headerTools(session: Session): Array<{ reason: string; tools: string[] }> {
  return session.events
    .filter((event) => event.type === 'request/header')
    .map((event) => {
      const data = event.data as { reason: string; header: { tools?: ReadonlyArray<{ name: string }> } }
      return { reason: data.reason, tools: (data.header.tools ?? []).map((tool) => tool.name) }
    })
}

/** Waits until `check` holds, polling every 10 ms, failing after `ms`. */
export async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
