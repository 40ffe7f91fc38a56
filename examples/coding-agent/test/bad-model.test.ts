/**
 * Tried as a new user would: the built demo pointed at a wrong base URL or given a bad key prints one
 * clear line on stderr naming the problem, and exits non-zero.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const demo = fileURLToPath(new URL('../dist/main.js', import.meta.url))

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the demo with these model variables (and no others), without blocking this process's server.
 * It runs in a fresh temporary directory, so its `.dsh-demo/` never meets the scripted demo test's.
 */
function runDemo(vars: Record<string, string>): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['DSH_BASE_URL', 'DSH_API_KEY', 'DSH_MODEL']) delete env[name]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [demo], {
      cwd: mkdtempSync(join(tmpdir(), 'dsh-bad-model-')),
      env: { ...env, ...vars },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (data: Buffer) => {
      stdout += data.toString('utf8')
    })
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString('utf8')
    })
    const timer = setTimeout(() => child.kill(), 30_000)
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
}

let server: Server
let baseURL: string
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url === '/v1/chat/completions') {
        res.writeHead(401, { 'content-type': 'application/json', 'x-request-id': 'req_badkey' })
        res.end(
          JSON.stringify({
            error: {
              message: 'Incorrect API key provided: sk-wrong.',
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          }),
        )
      } else {
        res.writeHead(404, { 'content-type': 'text/html' })
        res.end('<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>')
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

function expectOneLine(run: Run, line: string): void {
  expect(run.status).toBe(1)
  expect(run.stderr).toBe(`${line}\n`)
  expect(run.stdout).not.toMatch(/^\s+at /m)
}

describe('the demo with a model it cannot use', () => {
  it('a bad key: one line naming the key, the status, the provider code and the request id', async () => {
    const run = await runDemo({
      DSH_BASE_URL: `${baseURL}/v1`,
      DSH_MODEL: 'gpt-4o-mini',
      DSH_API_KEY: 'sk-wrong',
    })
    expectOneLine(
      run,
      // The server quotes the key back; the demo's line carries it redacted.
      `dsh demo: the server refused the API key (check DSH_API_KEY): ${baseURL}/v1 (model gpt-4o-mini): HTTP 401 invalid_api_key: Incorrect API key provided: [redacted]. [request req_badkey]`,
    )
  })

  it('a base URL without /v1: one line saying the endpoint is not there', async () => {
    const run = await runDemo({ DSH_BASE_URL: baseURL, DSH_MODEL: 'gpt-4o-mini' })
    expectOneLine(
      run,
      `dsh demo: ${baseURL} has no chat completions endpoint (check DSH_BASE_URL; it usually ends in /v1): ${baseURL} (model gpt-4o-mini): HTTP 404 Not Found, text/html body: 404 Not Found Not Found (POST ${baseURL}/chat/completions; is the base URL right?)`,
    )
  })

  it('nothing listening at the base URL: one line saying it cannot be reached', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const url = `http://127.0.0.1:${port}/v1`
    const run = await runDemo({ DSH_BASE_URL: url, DSH_MODEL: 'llama3.2' })
    expectOneLine(
      run,
      `dsh demo: cannot reach the model server at ${url} (check DSH_BASE_URL): ${url} (model llama3.2): POST ${url}/chat/completions failed: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    )
  })

  it('a base URL that is not a URL: one line, before anything runs', async () => {
    const run = await runDemo({ DSH_BASE_URL: 'localhost:11434', DSH_MODEL: 'llama3.2' })
    expect(run).toEqual({
      status: 2,
      stdout: '',
      stderr: 'dsh demo: openAiCompatible: baseURL must be an absolute http(s) URL, got "localhost:11434"\n',
    })
  })
})
