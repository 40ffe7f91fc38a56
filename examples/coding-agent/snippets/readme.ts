// The root README's example, verbatim from the first import on; test/snippets.test.ts runs it.
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { Invariants } from 'dsh-invariants'
import { LlmRuntime, userText } from 'dsh-llm'
import { deepseek } from 'dsh-llm-openai'
import { JsonlStorage, Sessions } from 'dsh-session'
import { z } from 'zod'

const app = new Context()
await app.plugin(LlmRuntime)
await app.plugin(Sessions, { storage: new JsonlStorage({ dir: 'sessions' }) })
await app.plugin(Invariants) // re-derive every request from the log before it is sent
await app.plugin(ToolRegistry)
await app.plugin(AgentLoop)
app.llm.registerAdapter('deepseek', deepseek({ apiKey: process.env.DEEPSEEK_API_KEY ?? '' }))

app.tools.register({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
})
app.on('session/event', (_session, event) => {
  if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') {
    process.stdout.write(event.data.chunk.text) // the answer, as it streams
  }
})

const agent = await app.agentLoop.create({ provider: 'deepseek', model: 'deepseek-chat' })
agent.send(userText('What is 2 + 40? Use the add tool.'))
await agent.whenIdle()
await agent.dispose() // flushes and closes sessions/<session id>.jsonl
