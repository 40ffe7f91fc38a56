// The agent of docs/quick-start.md, verbatim from the first import on; test/quick-start.test.ts runs it.
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { Invariants } from 'dsh-invariants'
import { LlmRuntime, type Message, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse, toolCallResponse } from 'dsh-llm/testing'
import { Sessions } from 'dsh-session'
import { z } from 'zod'

/** Runs one turn on a scripted model and returns the history the model would see next. */
export async function askTheAgent(question: string): Promise<readonly Message[]> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions) // in memory; { storage: new JsonlStorage({ dir }) } keeps JSONL files
  await app.plugin(Invariants)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)

  // A model that calls `add` once and then answers. Swap in `deepseek({ apiKey })` for a real one.
  const model = scriptedAdapter([
    toolCallResponse('call_1', 'add', { a: 2, b: 40 }),
    textResponse('It is 42.'),
  ])
  app.llm.registerAdapter('scripted', model)
  app.tools.register({
    name: 'add',
    description: 'Add two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  })

  const agent = await app.agentLoop.create({ provider: 'scripted', model: 'any', system: 'Be brief.' })
  agent.send(userText(question))
  await agent.whenIdle()
  const history = agent.session.deriveMessages()
  await app.fiber.dispose() // disposes the agent and closes its session
  return history
}
