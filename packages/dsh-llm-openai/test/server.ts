/** A local HTTP server for the adapter tests: records each request, answers with a scripted reply. */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the server received. */
export interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** Resolves when the connection of this request has closed (the client hung up or we ended). */
  readonly closed: Promise<void>
}

/** How to answer one request. */
export interface Reply {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** Written in order, each after `delayMs` (the first too, once headers are flushed). */
  readonly writes?: readonly (string | Uint8Array)[]
  readonly delayMs?: number
  /** After the writes: end the response (default), destroy the socket, or hang until the client leaves. */
  readonly after?: 'end' | 'destroy' | 'hang'
  /** Do not even send headers: hang from the start. */
  readonly silent?: boolean
}

export interface FixtureServer {
  readonly baseURL: string
  readonly requests: Recorded[]
  /** Queues the reply for the next request. */
  reply(reply: Reply): void
  close(): Promise<void>
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }

/** The bytes of `test/fixtures/<name>`. */
export function fixture(name: string): Buffer {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url))
}

/** A 200 event-stream reply writing `body` split into pieces at the given byte offsets. */
export function sseReply(
  body: Uint8Array,
  splitAt: readonly number[] = [],
  extra: Partial<Reply> = {},
): Reply {
  const writes: Uint8Array[] = []
  let from = 0
  for (const at of [...splitAt, body.length]) {
    writes.push(body.subarray(from, at))
    from = at
  }
  return { status: 200, headers: { ...SSE_HEADERS, 'x-request-id': 'req-fixture' }, writes, ...extra }
}

/** Starts a server on 127.0.0.1, port 0. Unscripted requests get a 599 so a test fails loudly. */
export async function startServer(): Promise<FixtureServer> {
  const replies: Reply[] = []
  const requests: Recorded[] = []
  const server: Server = createServer((req, res) => {
    req.socket.setNoDelay(true)
    const closed = new Promise<void>((resolve) => res.on('close', () => resolve()))
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(parts).toString('utf8'),
        closed,
      })
      const reply = replies.shift() ?? { status: 599, writes: ['no reply scripted'] }
      void play(reply, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (reply) => replies.push(reply),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function play(reply: Reply, res: import('node:http').ServerResponse): Promise<void> {
  if (reply.silent === true) return
  res.writeHead(reply.status ?? 200, reply.headers ?? {})
  res.flushHeaders()
  for (const write of reply.writes ?? []) {
    if (reply.delayMs !== undefined) await sleep(reply.delayMs)
    if (res.destroyed) return
    res.write(write)
  }
  if (reply.delayMs !== undefined) await sleep(reply.delayMs)
  switch (reply.after ?? 'end') {
    case 'end':
      res.end()
      break
    case 'destroy':
      res.socket?.destroy()
      break
    case 'hang':
      break
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
