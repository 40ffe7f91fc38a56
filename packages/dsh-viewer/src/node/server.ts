/**
 * A local server for one page: 127.0.0.1 only, the page at `/`, nothing else, and only to requests
 * addressed to this server by name (a DNS-rebinding page that reaches the port under its own host
 * name is refused).
 */
import { createServer, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { servedPolicy } from './policy.ts'

/** A running viewer server. */
export interface ViewerServer {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string
  /** Stops accepting connections; resolves once the server has closed. */
  close(): Promise<void>
}

/** Whether the request's `Host` names this server: `127.0.0.1:<port>` or `localhost:<port>`. */
export function isLocalHost(host: string | undefined, port: number): boolean {
  if (host === undefined) return false
  const name = host.toLowerCase()
  return name === `127.0.0.1:${port}` || name === `localhost:${port}`
}

/**
 * Serves `html` at `/` on 127.0.0.1 (`port` 0 picks a free one). Answers 403 to a request whose
 * `Host` is not `127.0.0.1:<port>` or `localhost:<port>`, 404 to other paths and methods. Every
 * answer carries `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` and a
 * Content-Security-Policy: the page's own (`servedPolicy`), `default-src 'none'` for the others.
 */
export async function serveViewer(html: string, port = 0): Promise<ViewerServer> {
  const pagePolicy = servedPolicy(html)
  const guarded: OutgoingHttpHeaders = {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  }
  const plain = (status: number, text: string): [number, OutgoingHttpHeaders, string] => [
    status,
    {
      ...guarded,
      'content-type': 'text/plain; charset=utf-8',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    },
    text,
  ]
  const answer = (req: IncomingMessage): [number, OutgoingHttpHeaders, string] => {
    if (!isLocalHost(req.headers.host, boundPort)) return plain(403, 'forbidden: unknown host\n')
    if (
      (req.method === 'GET' || req.method === 'HEAD') &&
      (req.url === '/' || req.url?.startsWith('/?') === true)
    ) {
      const headers = {
        ...guarded,
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': pagePolicy,
      }
      return [200, headers, html]
    }
    return plain(404, 'not found')
  }
  let boundPort = port
  const server = createServer((req, res) => {
    const [status, headers, body] = answer(req)
    res.writeHead(status, headers)
    res.end(req.method === 'HEAD' ? undefined : body)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  boundPort = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${boundPort}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
