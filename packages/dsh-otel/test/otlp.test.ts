/** The observability guide's OTLP setup, run against a local collector stand-in on 127.0.0.1. */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse } from 'dsh-llm/testing'
import { Telemetry } from 'dsh-otel'
import { Sessions } from 'dsh-session'
import { expect, it } from 'vitest'

interface OtlpSpan {
  name: string
  attributes: { key: string; value: Record<string, unknown> }[]
}

it('exports the spans over OTLP/HTTP to a collector', async () => {
  const bodies: { path: string; body: string }[] = []
  const collector = createServer((req, res) => {
    let body = ''
    req.on('data', (part: Buffer) => {
      body += part.toString()
    })
    req.on('end', () => {
      bodies.push({ path: req.url ?? '', body })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve))
  const { port } = collector.address() as AddressInfo

  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'my-agent' }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces` }),
      }),
    ],
  })
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  await app.plugin(Telemetry, { tracer: provider.getTracer('my-agent') })
  app.llm.registerAdapter('test', scriptedAdapter([textResponse('hi')]))
  const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
  agent.send(userText('hello'))
  await agent.whenIdle()
  await provider.shutdown()
  await new Promise<void>((resolve) => collector.close(() => resolve()))

  expect(bodies.map((b) => b.path)).toEqual(['/v1/traces'])
  const payload = JSON.parse(bodies[0]?.body ?? '{}') as {
    resourceSpans: { resource: OtlpSpan; scopeSpans: { spans: OtlpSpan[] }[] }[]
  }
  const [resourceSpans] = payload.resourceSpans
  expect(resourceSpans?.resource.attributes).toContainEqual({
    key: 'service.name',
    value: { stringValue: 'my-agent' },
  })
  const spans = resourceSpans?.scopeSpans.flatMap((s) => s.spans) ?? []
  expect(spans.map((s) => s.name).sort()).toEqual(['chat m', 'invoke_agent dsh', 'step 1'])
  const chat = spans.find((s) => s.name === 'chat m')
  expect(chat?.attributes).toContainEqual({ key: 'gen_ai.operation.name', value: { stringValue: 'chat' } })
})
