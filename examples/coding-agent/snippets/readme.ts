// The README's quick start, verbatim: `tsc` checks it here, the snippet tests run it, and
// scripts/consumer-smoke.mjs runs the README's copy in a fresh npm project.
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { Invariants } from 'dsh-invariants'
import { type LlmAdapter, LlmRuntime } from 'dsh-llm'
import { scriptedAdapter, textResponse, toolCallResponse } from 'dsh-llm/testing'
import { deepseek } from 'dsh-llm-openai'
import { JsonlStorage, Sessions } from 'dsh-session'
import { z } from 'zod'

/** DeepSeek with your key; with DSH_SCRIPTED=1 a scripted stand-in that needs no key or network. */
function model(): LlmAdapter {
  if (process.env.DSH_SCRIPTED === '1') {
    return scriptedAdapter([toolCallResponse('call_1', 'add', { a: 2, b: 40 }), textResponse('2 + 40 = 42.')])
  }
  return deepseek({ apiKey: process.env.DEEPSEEK_API_KEY ?? '' }) // throws at once if the key is missing
}

const app = new Context()
try {
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, { storage: new JsonlStorage({ dir: 'sessions' }) })
  await app.plugin(Invariants) // re-derive every request from the log before it is sent
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter('deepseek', model())
  app.tools.register({
    name: 'add',
    description: 'Add two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  })
  app.on('session/event', (_session, event) => {
    if (event.type === 'tool/call') console.log(`[${event.data.name} ${event.data.arguments}]`)
  })
  app.on('session/chunk', (_session, _seq, _time, _turn, _step, chunk) => {
    if (chunk.type === 'text-delta') process.stdout.write(chunk.text) // the answer, as it streams
  })

  const agent = await app.agentLoop.create({ provider: 'deepseek', model: 'deepseek-chat' })
  const result = await agent.prompt('What is 2 + 40? Use the add tool.') // rejects if the turn fails
  console.log(`\n[${result.stopReason.kind} in ${result.steps} steps; session ${result.sessionId}]`)
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await app.fiber.dispose() // flushes and closes sessions/<session id>.jsonl
}
