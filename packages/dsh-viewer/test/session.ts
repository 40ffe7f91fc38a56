/** A scripted two-turn session for the data-layer tests: prefix, parallel tools, a system prompt change. */
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse, toolCallsResponse } from 'dsh-llm/testing'
import { type SessionEvent, Sessions } from 'dsh-session'
import { z } from 'zod'

/**
 * Turn 1: the model reads two files in parallel, then answers. Turn 2 (after the system prompt
 * changes and temperature goes to 0.5): a plain answer. Every request starts with a one-message
 * session prefix. Resolves with the log.
 */
export async function recordSession(): Promise<readonly SessionEvent[]> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter(
    'test',
    scriptedAdapter([
      toolCallsResponse([
        { id: 'c1', name: 'read', args: { path: 'a.txt' } },
        { id: 'c2', name: 'read', args: { path: 'b.txt' } },
      ]),
      textResponse('alpha, beta', { usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 40 } }),
      textResponse('done'),
    ]),
  )
  app.tools.register({
    name: 'read',
    description: 'Reads a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => (path === 'a.txt' ? 'alpha' : 'beta'),
  })
  app.on('agent/session-prefix', async (_input, next) => [
    userText('House rules.', { kind: 'plugin', plugin: 'rules' }),
    ...(await next()),
  ])
  app.on('agent/system-prompt', async (input) => (input.turn === 1 ? 'Be brief.' : 'Be very brief.'))
  app.on('agent/request', async (input, next) => {
    const config = await next()
    return input.turn === 1 ? config : { ...config, temperature: 0.5 }
  })
  const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
  agent.send(userText('What do a.txt and b.txt say?'))
  await agent.whenIdle()
  agent.send(userText('Thanks.'))
  await agent.whenIdle()
  const events = agent.session.events
  await agent.dispose()
  return events
}
