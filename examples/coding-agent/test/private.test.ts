/**
 * The demo run against a provider that takes its key in the base URL's query string and in the
 * Authorization header, and quotes the key back in an error: the session folder and files it leaves
 * are owner-only, and the key is in none of its artifacts — session files, stdout, stderr, and the
 * viewer page made from the session.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'

const demo = fileURLToPath(new URL('../dist/main.js', import.meta.url))
const viewer = fileURLToPath(new URL('../../../packages/dsh-viewer/dist/cli.js', import.meta.url))
const KEY = 'sk-demo-private-0123456789abcdef'

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/** An OpenAI-compatible server that wants the key twice, fails the first call quoting it, then answers. */
let server: Server
let port: number
const refused: string[] = []
beforeAll(async () => {
  let calls = 0
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost')
      if (url.searchParams.get('api-key') !== KEY || req.headers.authorization !== `Bearer ${KEY}`) {
        refused.push(String(req.url))
        res.writeHead(401, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"no key"}}')
        return
      }
      if (calls++ === 0) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' })
        res.end(JSON.stringify({ error: { message: `backend busy for key ${KEY}` } }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const words = 'The project is a small calculator with add and multiply, and a few tests around them.'
      res.end(
        `${chunk({ role: 'assistant', content: '' })}${words
          .split(' ')
          .map((word) => chunk({ content: `${word} ` }))
          .join('')}${chunk({}, 'stop')}data: [DONE]\n\n`,
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

function run(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const base: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['DSH_BASE_URL', 'DSH_API_KEY', 'DSH_MODEL']) delete base[name]
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...base, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (data: Buffer) => {
      stdout += data.toString('utf8')
    })
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString('utf8')
    })
    const timer = setTimeout(() => child.kill(), 60_000)
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
}

it('leaves an owner-only session folder, and the key in no session file, output or viewer page', {
  timeout: 120_000,
}, async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'dsh-private-demo-'))
  const demoRun = await run([demo], cwd, {
    DSH_BASE_URL: `http://127.0.0.1:${port}/v1?api-key=${KEY}`,
    DSH_API_KEY: KEY,
    DSH_MODEL: 'fake-model',
  })
  expect(refused).toEqual([])
  expect(demoRun.stdout).toContain(`model: fake-model at http://127.0.0.1:${port}/v1?api-key=[redacted]`)
  expect(demoRun.stdout).toMatch(/summary: 3 turns, .* invariants clean/)
  expect(demoRun.status).toBe(0)

  const sessions = join(cwd, '.dsh-demo/sessions')
  const files = readdirSync(sessions)
  expect(files).toEqual(['coding-agent-demo.jsonl'])
  expect(statSync(sessions).mode & 0o777).toBe(0o700)
  for (const file of files) expect(statSync(join(sessions, file)).mode & 0o777).toBe(0o600)
  const log = readFileSync(join(sessions, 'coding-agent-demo.jsonl'), 'utf8')
  // The first call failed and was retried: the failure quoting the key is in the log, redacted.
  expect(log).toContain('"type":"request/retry"')
  expect(log).toContain('backend busy for key [redacted]')

  const page = join(cwd, 'session.html')
  const pageRun = spawnSync(process.execPath, [viewer, join(sessions, files[0] ?? ''), '--out', page], {
    encoding: 'utf8',
  })
  expect(pageRun.status).toBe(0)
  expect(statSync(page).mode & 0o777).toBe(0o600)
  const html = readFileSync(page, 'utf8')
  expect(html).toContain('backend busy for key [redacted]')

  const artifacts = {
    log,
    stdout: demoRun.stdout,
    stderr: demoRun.stderr,
    page: html,
    viewerOutput: pageRun.stdout + pageRun.stderr,
  }
  for (const [where, text] of Object.entries(artifacts)) {
    expect({ where, hasKey: text.includes(KEY) }).toEqual({ where, hasKey: false })
  }
})
