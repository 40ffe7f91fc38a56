/**
 * One API key fed through every failure path of a real stack — OpenAI-compatible adapter over HTTP,
 * agent loop, JSONL sessions, spans — and then looked for in everything the run left behind: the
 * session files, the spans, stderr and warnings, the rejected promises and the viewer page. It is
 * nowhere. Each path is also checked to have happened, so the search is not over an empty run.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime, SessionId } from 'dsh-llm'
import { openAiCompatible } from 'dsh-llm-openai'
import { Telemetry } from 'dsh-otel'
import { JsonlStorage, Sessions } from 'dsh-session'
import { readViewData, renderPage } from 'dsh-viewer'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'

const KEY = 'sk-live-0123456789abcdefSECRET'

function sse(...payloads: unknown[]): string {
  return [...payloads.map((p) => JSON.stringify(p)), '[DONE]'].map((line) => `data: ${line}\n\n`).join('')
}
const delta = (content: string, finish: string | null = null) => ({
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
})

/** The provider: each path of the URL answers one way, and echoes the key where a provider might. */
let server: Server
let base: string
let retryCalls = 0
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]
      if (path === '/http/chat/completions') {
        res.writeHead(401, { 'content-type': 'application/json', 'x-request-id': `req-${KEY}` })
        res.end(
          JSON.stringify({
            error: { message: `Incorrect API key provided: ${KEY}`, code: 'invalid_api_key' },
          }),
        )
      } else if (path === '/retry/chat/completions' && retryCalls++ === 0) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' })
        res.end(JSON.stringify({ error: { message: `overloaded (${req.headers.authorization})` } }))
      } else if (path === '/retry/chat/completions') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(sse(delta('fine'), delta('', 'stop')))
      } else if (path === '/in-band/chat/completions') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(sse(delta('a'), { error: { message: `key ${KEY} over quota`, code: 'quota' } }))
      } else if (path === '/hang/chat/completions') {
        // Never answers: the adapter's inactivity timeout fires.
      } else {
        res.writeHead(404)
        res.end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => {
  server.closeAllConnections()
  return new Promise<void>((resolve) => server.close(() => resolve()))
})

it('a key fed through every failure path appears in no log file, span, stderr line, error or viewer page', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'dsh-no-secret-')), 'sessions')
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const stderr: string[] = []
  const writeSpy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk))
    return true
  })
  const warningSpy = vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => {
    stderr.push(String(warning))
  })
  const rendered: string[] = []
  try {
    // Adapter construction: the refusal quotes the base URL.
    try {
      openAiCompatible({ baseURL: `ftp://user:${KEY}@${base.slice(7)}/v1?api-key=${KEY}`, apiKey: KEY })
    } catch (error) {
      rendered.push(String((error as Error).stack), JSON.stringify(error))
    }
    const app = new Context()
    const logged: string[] = []
    app.logger.exporter({ export: (message) => void logged.push(JSON.stringify(message.args)) })
    await app.plugin(LlmRuntime)
    await app.plugin(Sessions, { storage: new JsonlStorage({ dir }) })
    await app.plugin(ToolRegistry)
    await app.plugin(AgentLoop)
    await app.plugin(Telemetry, { tracer: provider.getTracer('test') })
    const keyed = (path: string, extra: object = {}) =>
      openAiCompatible({ baseURL: `${base}/${path}?api-key=${KEY}`, apiKey: KEY, ...extra })
    app.llm.registerAdapter('http', keyed('http'))
    app.llm.registerAdapter('retry', keyed('retry'))
    app.llm.registerAdapter('in-band', keyed('in-band'))
    app.llm.registerAdapter('timeout', keyed('hang', { timeoutMs: 100 }))
    // Credentials in the userinfo: fetch refuses such a URL, a transport failure quoting it.
    app.llm.registerAdapter(
      'transport',
      openAiCompatible({ baseURL: `http://me:${KEY}@127.0.0.1:9/v1?token=${KEY}` }),
    )

    const outcomes: Record<string, string> = {}
    for (const name of ['http', 'transport', 'timeout', 'retry', 'in-band']) {
      const agent = await app.agentLoop.create({
        provider: name,
        model: 'm',
        sessionId: SessionId(name),
        retry: { maxAttempts: 2, initialDelayMs: 1, retryableCodes: name === 'retry' ? ['SERVER'] : [] },
      })
      try {
        const result = await agent.prompt('hello')
        outcomes[name] = result.stopReason.kind
      } catch (error) {
        outcomes[name] = String((error as { code?: unknown }).code)
        rendered.push(
          String((error as Error).stack),
          JSON.stringify(error, Object.getOwnPropertyNames(error)),
        )
        let cause: unknown = (error as Error).cause
        while (cause instanceof Error) {
          rendered.push(String(cause.stack))
          cause = cause.cause
        }
      }
      await agent.dispose()
    }
    await app.fiber.dispose()

    // Every path happened.
    const logs = Object.fromEntries(
      readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')] as const),
    )
    const failures = Object.fromEntries(
      Object.entries(logs).map(([name, text]) => [
        name,
        text
          .trimEnd()
          .split('\n')
          .map(
            (line) =>
              JSON.parse(line) as { type?: string; data?: { reason?: { failure?: { code: string } } } },
          )
          .filter((event) => event.type === 'turn/end' || event.type === 'request/retry')
          .map((event) => `${event.type} ${event.data?.reason?.failure?.code ?? ''}`.trim()),
      ]),
    )
    expect(failures).toEqual({
      'http.jsonl': ['turn/end AUTH'],
      'transport.jsonl': ['turn/end TRANSPORT'],
      'timeout.jsonl': ['turn/end TIMEOUT'],
      'retry.jsonl': ['request/retry', 'turn/end'],
      'in-band.jsonl': ['turn/end SERVER'],
    })
    expect(outcomes).toEqual({
      http: 'TURN_FAILED',
      transport: 'TURN_FAILED',
      timeout: 'TURN_FAILED',
      retry: 'completed',
      'in-band': 'TURN_FAILED',
    })
    expect(logs['retry.jsonl']).toContain(
      `retry?api-key=[redacted] (model m): HTTP 503: overloaded ([redacted])`,
    )

    // ... and left the key nowhere.
    const spans = JSON.stringify(
      exporter
        .getFinishedSpans()
        .map((s) => [s.name, s.attributes, s.status, s.events.map((e) => [e.name, e.attributes])]),
    )
    expect(spans).toContain('AUTH')
    const pages = Object.keys(logs).map((name) => renderPage(readViewData(join(dir, name)), ''))
    const artifacts = {
      ...logs,
      spans,
      stderr: stderr.join(''),
      logger: logged.join('\n'),
      rendered: rendered.join('\n'),
      pages: pages.join('\n'),
    }
    for (const [where, text] of Object.entries(artifacts)) {
      expect({ where, hasKey: text.includes(KEY) }).toEqual({ where, hasKey: false })
    }
    expect(rendered.join('\n')).toContain('[redacted]')
  } finally {
    writeSpy.mockRestore()
    warningSpy.mockRestore()
  }
})
