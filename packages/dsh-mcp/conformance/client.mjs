// The client the MCP conformance suite drives: `node client.mjs <server url>`, the scenario in
// MCP_CONFORMANCE_SCENARIO. It mounts the dsh stack (built packages) with McpTools on that server
// and runs one agent turn on a scripted model that calls the scenario's tool.
import { Context } from 'cordis'
import AgentLoop, { ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime } from 'dsh-llm'
import { scriptedAdapter, textResponse, toolCallResponse } from 'dsh-llm/testing'
import McpTools from 'dsh-mcp'
import { Sessions } from 'dsh-session'

const url = process.argv[2]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
const calls = {
  tools_call: ['server__add_numbers', { a: 2, b: 3 }],
  'sse-retry': ['server__test_reconnection', {}],
}
const call = calls[scenario]

const app = new Context()
await app.plugin(LlmRuntime)
await app.plugin(Sessions)
await app.plugin(ToolRegistry)
await app.plugin(AgentLoop)
const mcp = app.plugin(McpTools, { servers: { server: { url } }, reconnect: false })
await mcp
await app.mcp.whenReady('server', { timeoutMs: 20_000 })
const script =
  call === undefined
    ? [textResponse('nothing to call')]
    : [toolCallResponse('c1', ...call), textResponse('done')]
app.llm.registerAdapter('test', scriptedAdapter(script))
const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
const result = await agent.prompt(`run ${scenario}`)
for (const event of agent.session.events) {
  if (event.type === 'tool/result') console.log(JSON.stringify(event.data.message.content[0].content))
}
console.log(`turn ended ${result.stopReason.kind}; tools: ${app.tools.names().join(', ')}`)
await agent.dispose()
await mcp.dispose()
