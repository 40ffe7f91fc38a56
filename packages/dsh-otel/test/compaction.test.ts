import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import Compaction from 'dsh-compaction'
import { LlmRuntime, SessionId, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse } from 'dsh-llm/testing'
import { Telemetry } from 'dsh-otel'
import { Sessions } from 'dsh-session'
import { expect, it } from 'vitest'
import { spanTree } from './tree.ts'

it('a compaction is a span, and its summarizing model request is a chat span under it', async () => {
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  await app.plugin(Telemetry, { tracer: provider.getTracer('test') })
  await app.plugin(Compaction, { auto: false, keepTokens: 0 })
  app.llm.registerAdapter(
    'test',
    scriptedAdapter([textResponse('hello there'), textResponse('They said hi.')]),
  )
  const agent = await app.agentLoop.create({ provider: 'test', model: 'm', sessionId: SessionId('otel-c') })
  await agent.prompt(userText('Please say hello. '.repeat(100)))
  const result = await app.compaction.compact(agent, { strategy: 'summarize' })
  if (result.kind !== 'completed') throw new Error(`compaction ${result.kind}`)
  const start = agent.session.events.findIndex((event) => event.type === 'compaction/start')
  const [, compaction] = spanTree(exporter.getFinishedSpans())
  expect(compaction).toEqual({
    name: 'compaction summarize',
    attributes: {
      'dsh.session.id': 'otel-c',
      'dsh.compaction.id': 'compaction-1',
      'dsh.compaction.trigger': 'manual',
      'dsh.compaction.strategy': 'summarize',
      'dsh.compaction.tokens_before': result.tokensBefore,
      'dsh.compaction.tokens_after': result.tokensAfter,
      'dsh.compaction.outcome': 'completed',
      'dsh.seq': start,
      'dsh.end_seq': start + 2,
    },
    children: [
      expect.objectContaining({
        name: 'chat m',
        attributes: expect.objectContaining({ 'gen_ai.operation.name': 'chat', 'dsh.session.id': 'otel-c' }),
      }),
    ],
  })
})
