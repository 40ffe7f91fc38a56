/**
 * The viewer's server answers only requests addressed to it by name (a DNS-rebinding page reaching
 * 127.0.0.1 under its own host name gets 403), and every answer carries the security headers; the
 * page's policy allows exactly its own inline style and script.
 */
import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { buildViewData, renderPage, serveViewer } from 'dsh-viewer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bigSession } from './big-session.ts'

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

/** A GET of `/` on `port` with the given `Host` header (undefined: none at all). */
function get(port: number, host: string | undefined, path = '/'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, setHost: false, headers: host === undefined ? {} : { host } },
      (res) => {
        let body = ''
        res.on('data', (part: Buffer) => {
          body += part.toString()
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

const page = renderPage(
  buildViewData({ file: 'x.jsonl', sessionId: 's', events: bigSession(1, 2) }),
  'window.__app = 1',
)
let server: Awaited<ReturnType<typeof serveViewer>>
let port: number
beforeAll(async () => {
  server = await serveViewer(page)
  port = Number(new URL(server.url).port)
})
afterAll(() => server.close())

describe('the viewer server', () => {
  it('refuses a request whose Host is not 127.0.0.1:<port> or localhost:<port> with 403', async () => {
    for (const host of [
      `evil.example:${port}`,
      'evil.example',
      '127.0.0.1',
      `127.0.0.1:${port + 1}`,
      `localhost.evil.example:${port}`,
    ]) {
      const answer = await get(port, host)
      expect({ host, status: answer.status, body: answer.body }).toEqual({
        host,
        status: 403,
        body: 'forbidden: unknown host\n',
      })
      expect(answer.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'")
    }
    // No Host at all: Node's HTTP server refuses the request before the viewer sees it.
    expect((await get(port, undefined)).status).toBe(400)
  })

  it('serves the page to 127.0.0.1:<port> and localhost:<port> with the security headers', async () => {
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(page)?.[1]
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`]) {
      const answer = await get(port, host)
      expect(answer.status).toBe(200)
      expect(answer.body).toBe(page)
      expect(answer.headers).toMatchObject({
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': `${policy}; frame-ancestors 'none'`,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
      })
    }
    const missing = await get(port, `127.0.0.1:${port}`, '/other')
    expect([missing.status, missing.headers['x-content-type-options']]).toEqual([404, 'nosniff'])
  })
})

describe('the page policy', () => {
  it('allows no network access, and exactly the inline style and script by their hashes', () => {
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(page)?.[1]
    const hash = (text: string | undefined) =>
      `'sha256-${createHash('sha256')
        .update(text ?? '')
        .digest('base64')}'`
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)?.[1]
    const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1]
    expect(script).toBe('window.__app = 1')
    expect(policy).toBe(
      `default-src 'none'; script-src ${hash(script)}; style-src ${hash(style)}; base-uri 'none'; form-action 'none'`,
    )
    // The policy comes before anything it governs.
    expect(page.indexOf('Content-Security-Policy')).toBeLessThan(page.indexOf('<style>'))
  })
})
