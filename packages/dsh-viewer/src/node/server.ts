/** A local server for one page: 127.0.0.1 only, the page at `/`, nothing else. */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A running viewer server. */
export interface ViewerServer {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string
  /** Stops accepting connections; resolves once the server has closed. */
  close(): Promise<void>
}

/** Serves `html` at `/` on 127.0.0.1 (`port` 0 picks a free one). Other paths get 404. */
export async function serveViewer(html: string, port = 0): Promise<ViewerServer> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && (req.url === '/' || req.url?.startsWith('/?') === true)) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      res.end(html)
      return
    }
    res.writeHead(404, { 'content-type': 'text/plain' })
    res.end('not found')
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  const address = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
