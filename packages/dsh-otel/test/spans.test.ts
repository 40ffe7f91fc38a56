import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime, SessionId, type StreamChunk, userText } from 'dsh-llm'
import {
  errorResponse,
  hangUntilAborted,
  scriptedAdapter,
  textBlockChunks,
  textResponse,
  toolCallsResponse,
} from 'dsh-llm/testing'
import { Telemetry } from 'dsh-otel'
import { type SessionEvent, Sessions } from 'dsh-session'
import { expect, it } from 'vitest'
import { z } from 'zod'
import { spanOutline } from './tree.ts'

async function setup(script: Parameters<typeof scriptedAdapter>[0], captureContent = false) {
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  await app.plugin(Telemetry, { tracer: provider.getTracer('test'), captureContent })
  app.llm.registerAdapter('test', scriptedAdapter(script))
  app.tools.register({
    name: 'read',
    description: 'Reads a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      if (path === 'a.txt') return 'alpha'
      if (path === 'b.txt') return 'beta'
      throw new Error(`no such file: ${path}`)
    },
  })
  const agent = await app.agentLoop.create({
    provider: 'test',
    model: 'm',
    temperature: 0.5,
    maxTokens: 200,
    sessionId: SessionId('otel-1'),
  })
  return { app, agent, exporter }
}

const SESSION = 'dsh.session.id="otel-1"'
const CONVERSATION = 'gen_ai.conversation.id="otel-1"'
const REQUEST =
  'gen_ai.operation.name="chat" gen_ai.provider.name="test" gen_ai.request.max_tokens=200 gen_ai.request.model="m" gen_ai.request.temperature=0.5'
const turn = (n: number, seqs: string, end: string, extra = '') =>
  `${seqs} ${SESSION} dsh.turn=${n} dsh.turn.end_reason="${end}" dsh.turn.trigger="send" ${extra}gen_ai.agent.name="dsh" ${CONVERSATION} gen_ai.operation.name="invoke_agent"`
const step = (turnNo: number, stepNo: number, seqs: string) =>
  `${seqs} ${SESSION} dsh.step=${stepNo} dsh.turn=${turnNo}`
const chat = (turnNo: number, stepNo: number, logLength: number | undefined, rest: string) =>
  `dsh.request.log_length=${logLength} ${SESSION} dsh.step=${stepNo} dsh.turn=${turnNo} ${rest}`
const tool = (seqs: string, callId: string, error = '') =>
  `${seqs} ${SESSION} dsh.step=1 dsh.turn=1 ${error}gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="${callId}" gen_ai.tool.name="read" gen_ai.tool.type="function"`

const SCRIPT = [
  errorResponse('RATE_LIMIT', 'slow down', { retryAfterMs: 1 }),
  toolCallsResponse(
    [
      { id: 'c1', name: 'read', args: { path: 'a.txt' } },
      { id: 'c2', name: 'read', args: { path: 'b.txt' } },
      { id: 'c3', name: 'read', args: { path: 'c.txt' } },
    ],
    { usage: { inputTokens: 10, outputTokens: 7, cacheReadTokens: 90, reasoningTokens: 3 } },
  ),
  textResponse('alpha and beta', { usage: { inputTokens: 20, outputTokens: 4, cacheReadTokens: 100 } }),
  hangUntilAborted(textBlockChunks(0, 'Let me').slice(0, 2)),
  errorResponse('AUTH', 'bad key', { status: 401 }),
]

/** Turn 1: a retried request, three parallel tools (one throws), a final answer. Turn 2: cancelled
 * mid-stream. Turn 3: the provider refuses the key. */
async function runThreeTurns(captureContent = false) {
  const { agent, exporter, app } = await setup(SCRIPT, captureContent)
  agent.send(userText('What do a.txt, b.txt and c.txt say?'))
  await agent.whenIdle()
  agent.send(userText('Write an essay.'))
  await new Promise<void>((resolve) => {
    const off = app.on('session/chunk', (_session, _seq, _time, _turn, _step, chunk) => {
      if (chunk.type === 'text-delta') {
        off()
        resolve()
      }
    })
  })
  agent.cancel('user pressed stop')
  await agent.whenIdle()
  agent.send(userText('Try again.'))
  await agent.whenIdle()
  return { agent, exporter }
}

/** The seqs of the events of `type`, in log order. */
function seqsOf(events: readonly SessionEvent[], type: string): number[] {
  return events.filter((e) => e.type === type).map((e) => e.seq)
}

/** The seq of each model call's first chunk: the log length its request was derived from. */
function callStarts(events: readonly SessionEvent[]): number[] {
  return events
    .filter((e, i) => {
      if (e.type !== 'assistant/chunk') return false
      const before = events[i - 1]
      return (
        before?.type !== 'assistant/chunk' || (before.data as { chunk: StreamChunk }).chunk.type === 'finish'
      )
    })
    .map((e) => e.seq)
}

it('emits the span tree of a turn with a retry, parallel tools and a tool failure, a cancelled turn and a failed turn', async () => {
  const { agent, exporter } = await runThreeTurns()
  const events = agent.session.events
  const [t1, t2, t3] = seqsOf(events, 'turn/start')
  const [t1End, t2End, t3End] = seqsOf(events, 'turn/end')
  const [s11, s12, s21, s31] = seqsOf(events, 'step/start')
  const [s11End, s12End, s21End, s31End] = seqsOf(events, 'step/end')
  const [c1, c2, c3] = seqsOf(events, 'tool/call')
  const [r1, r2, r3] = seqsOf(events, 'tool/result')
  const [retried, withTools, answer, cancelled, refused] = callStarts(events)
  expect(callStarts(events)).toHaveLength(5)
  expect(spanOutline(exporter.getFinishedSpans())).toEqual([
    `invoke_agent dsh | ${turn(1, `dsh.end_seq=${t1End} dsh.seq=${t1}`, 'completed')}`,
    `  step 1 | ${step(1, 1, `dsh.end_seq=${s11End} dsh.seq=${s11}`)}`,
    `    chat m [ERROR: slow down] | ${chat(1, 1, retried, `error.type="RATE_LIMIT" ${CONVERSATION} ${REQUEST} gen_ai.response.finish_reasons=["error"] gen_ai.response.model="m"`)}`,
    `    chat m | ${chat(1, 1, withTools, `${CONVERSATION} ${REQUEST} gen_ai.response.finish_reasons=["tool-calls"] gen_ai.response.model="m" gen_ai.usage.cache_read.input_tokens=90 gen_ai.usage.input_tokens=100 gen_ai.usage.output_tokens=7 gen_ai.usage.reasoning.output_tokens=3`)}`,
    `    execute_tool read | ${tool(`dsh.end_seq=${r1} dsh.seq=${c1}`, 'c1')}`,
    `    execute_tool read | ${tool(`dsh.end_seq=${r2} dsh.seq=${c2}`, 'c2')}`,
    `    execute_tool read [ERROR: ] | ${tool(`dsh.end_seq=${r3} dsh.seq=${c3}`, 'c3', 'error.type="TOOL_THREW" ')}`,
    `  step 2 | ${step(1, 2, `dsh.end_seq=${s12End} dsh.seq=${s12}`)}`,
    `    chat m | ${chat(1, 2, answer, `${CONVERSATION} ${REQUEST} gen_ai.response.finish_reasons=["stop"] gen_ai.response.model="m" gen_ai.usage.cache_read.input_tokens=100 gen_ai.usage.input_tokens=120 gen_ai.usage.output_tokens=4`)}`,
    `invoke_agent dsh [ERROR: user pressed stop] | ${turn(2, `dsh.end_seq=${t2End} dsh.seq=${t2}`, 'aborted', 'error.type="aborted" ')}`,
    `  step 1 | ${step(2, 1, `dsh.end_seq=${s21End} dsh.seq=${s21}`)}`,
    `    chat m [ERROR: scripted adapter: call #4 aborted] | ${chat(2, 1, cancelled, `error.type="ABORTED" ${CONVERSATION} ${REQUEST} gen_ai.response.finish_reasons=["aborted"] gen_ai.response.model="m"`)}`,
    `invoke_agent dsh [ERROR: bad key] | ${turn(3, `dsh.end_seq=${t3End} dsh.seq=${t3}`, 'error', 'error.type="AUTH" ')}`,
    `  step 1 | ${step(3, 1, `dsh.end_seq=${s31End} dsh.seq=${s31}`)}`,
    `    chat m [ERROR: bad key] | ${chat(3, 1, refused, `error.type="AUTH" ${CONVERSATION} ${REQUEST} gen_ai.response.finish_reasons=["error"] gen_ai.response.model="m"`)}`,
  ])
})

it('records the retry as an event on its step span', async () => {
  const { agent, exporter } = await runThreeTurns()
  const [retrySeq] = seqsOf(agent.session.events, 'request/retry')
  const step = exporter.getFinishedSpans().find((s) => s.name === 'step 1' && s.attributes['dsh.turn'] === 1)
  expect(step?.events.map((e) => [e.name, e.attributes])).toEqual([
    [
      'dsh.request.retry',
      { 'dsh.seq': retrySeq, 'dsh.retry.attempt': 1, 'dsh.retry.delay_ms': 1, 'error.type': 'RATE_LIMIT' },
    ],
  ])
})

it('every seq on a span names the log event that opened or closed it', async () => {
  const { agent, exporter } = await runThreeTurns()
  const events = agent.session.events
  for (const span of exporter.getFinishedSpans()) {
    const opened = span.attributes['dsh.seq']
    const closed = span.attributes['dsh.end_seq']
    if (typeof opened !== 'number' || typeof closed !== 'number') continue
    const pair = `${events[opened]?.type} -> ${events[closed]?.type}`
    if (span.name.startsWith('invoke_agent')) expect(pair).toBe('turn/start -> turn/end')
    else if (span.name.startsWith('step')) expect(pair).toBe('step/start -> step/end')
    else expect(pair).toBe('tool/call -> tool/result')
  }
  expect(exporter.getFinishedSpans()).toHaveLength(15)
})

it('records prompts, outputs, tool arguments and results only when captureContent is on', async () => {
  const { agent, exporter } = await runThreeTurns(true)
  const spans = exporter.getFinishedSpans()
  const answerStart = callStarts(agent.session.events)[2]
  const answer = spans.find((s) => s.attributes['dsh.request.log_length'] === answerStart)
  expect(JSON.parse(String(answer?.attributes['gen_ai.output.messages']))).toEqual([
    { role: 'assistant', parts: [{ type: 'text', content: 'alpha and beta' }], finish_reason: 'stop' },
  ])
  const input = JSON.parse(String(answer?.attributes['gen_ai.input.messages'])) as {
    role: string
    parts: unknown[]
  }[]
  expect(input[0]).toEqual({
    role: 'user',
    parts: [{ type: 'text', content: 'What do a.txt, b.txt and c.txt say?' }],
  })
  expect(input[2]).toEqual({
    role: 'user',
    parts: [{ type: 'tool_call_response', id: 'c1', response: [{ type: 'text', content: 'alpha' }] }],
  })
  const c1 = spans.find((s) => s.attributes['gen_ai.tool.call.id'] === 'c1')
  expect(c1?.attributes['gen_ai.tool.call.arguments']).toBe('{"path":"a.txt"}')
  expect(c1?.attributes['gen_ai.tool.call.result']).toBe('[{"type":"text","content":"alpha"}]')
})

/** Every text the finished spans carry: names, attribute values, status messages and span events. */
function spanText(spans: ReturnType<InMemorySpanExporter['getFinishedSpans']>): string {
  return JSON.stringify(
    spans.map((s) => [s.name, s.attributes, s.status, s.events.map((e) => [e.name, e.attributes])]),
  )
}

it('keeps prompts, outputs, tool arguments, tool results and tool error texts out of spans when captureContent is off', async () => {
  const off = spanText((await runThreeTurns(false)).exporter.getFinishedSpans())
  // Arguments (a.txt, c.txt), results (alpha, beta), the prompt and the failed tool's message.
  for (const content of [
    'a.txt',
    'b.txt',
    'c.txt',
    'alpha',
    'beta',
    'What do',
    'Write an essay',
    'no such file',
  ]) {
    expect({ content, found: off.includes(content) }).toEqual({ content, found: false })
  }
  const on = spanText((await runThreeTurns(true)).exporter.getFinishedSpans())
  for (const content of [
    'a.txt',
    'c.txt',
    'alpha',
    'What do',
    'tool \\"read\\" (call c3) threw: no such file: c.txt',
  ]) {
    expect({ content, found: on.includes(content) }).toEqual({ content, found: true })
  }
})
