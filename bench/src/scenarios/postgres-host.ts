/**
 * One host process of the PostgreSQL fleet row: `agents` agents on Sessions over PostgresStorage,
 * each running one turn of `steps` tool steps against a zero-latency model, all at once.
 */
import { Context } from 'cordis'
import AgentLoop, { ToolRegistry } from 'dsh-agent-loop'
import { type LlmAdapter, LlmRuntime, type Message, userText } from 'dsh-llm'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import { Sessions } from 'dsh-session'
import { PostgresStorage } from 'dsh-session-postgres'
import { z } from 'zod'
import { percentile } from '../stats.ts'
import type { PgFleetResult } from './postgres.ts'

function loopModel(steps: number): LlmAdapter {
  return {
    async *stream(request) {
      const done = request.messages.filter((m: Message) =>
        m.content.some((b) => b.type === 'tool-result'),
      ).length
      const reply =
        done + 1 < steps ? toolCallResponse(`c${done}`, 'work', { i: done }) : textResponse('done')
      for (const chunk of reply) yield chunk
    },
  }
}

/** Runs the host and reports its steps, wall time and append latencies. */
export async function runFleetHost(
  url: string,
  agents: number,
  steps: number,
  tag: string,
): Promise<PgFleetResult> {
  const storage = await PostgresStorage.connect({
    connectionString: url,
    poolSize: 10,
    owner: `bench-${tag}`,
  })
  const latencies: number[] = []
  storage.onAppend((outcome) => {
    if (outcome.error === undefined) latencies.push(outcome.ms)
  })
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, { storage })
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter('loop', loopModel(steps))
  app.tools.register({
    name: 'work',
    description: 'work',
    parameters: z.object({ i: z.number() }),
    execute: () => 'ok',
  })
  const created = await Promise.all(
    Array.from({ length: agents }, () => app.agentLoop.create({ provider: 'loop', model: 'm' })),
  )
  const started = performance.now()
  for (const agent of created) agent.send(userText('go'))
  await Promise.all(created.map((agent) => agent.whenIdle()))
  const ms = performance.now() - started
  await Promise.all(created.map((agent) => agent.dispose()))
  await storage.close()
  return { steps: agents * steps, ms, p99AppendMs: percentile(latencies, 99), appends: latencies.length }
}
