/**
 * A fault-injecting TCP proxy on 127.0.0.1 in front of the test PostgreSQL: it passes bytes both
 * ways until armed, then cuts the connection that carries the next append at a chosen point, or
 * holds every open connection's traffic until released.
 */
import net from 'node:net'

/**
 * Where the armed cut falls, relative to the next client chunk that carries the append statement:
 * `before-send` drops it (the server never sees it); `mid-request` passes `at` of its bytes (a
 * truncated message the server never runs); `after-commit` passes it and drops the server's reply
 * (sent once the statement committed); `mid-reply` passes `at` of the reply's bytes.
 */
export type CutPoint = 'before-send' | 'mid-request' | 'after-commit' | 'mid-reply'

interface Pair {
  readonly client: net.Socket
  readonly server: net.Socket
  /** Set on the pair whose request was let through: its reply is cut. */
  cutReply?: { point: 'after-commit' | 'mid-reply'; at: number }
  held?: { toServer: Buffer[]; toClient: Buffer[] } | undefined
}

/** The proxy. `port` is where clients connect; `stats.cuts` counts cuts made. */
export class FaultProxy {
  readonly stats = { cuts: 0, connections: 0 }
  private armed: { point: CutPoint; at: number; marker: Buffer } | undefined
  private readonly pairs = new Set<Pair>()

  private constructor(
    private readonly listener: net.Server,
    readonly port: number,
  ) {}

  /** Starts a proxy to `host:port` on a free port of 127.0.0.1. */
  static async start(host: string, port: number): Promise<FaultProxy> {
    let proxy: FaultProxy | undefined
    const listener = net.createServer((client) => proxy?.accept(client, host, port))
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
    const address = listener.address()
    if (address === null || typeof address === 'string') throw new Error('fault proxy: no port')
    proxy = new FaultProxy(listener, address.port)
    return proxy
  }

  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string {
    const parsed = new URL(url)
    parsed.hostname = '127.0.0.1'
    parsed.port = String(this.port)
    return parsed.toString()
  }

  /**
   * Cuts the connection carrying the next client chunk that contains `marker` (by default the
   * fenced append's prepared statement name) at `point`; `at` (0..1) is the share of the request or
   * reply let through for the `mid-*` points.
   */
  arm(point: CutPoint, at = 0.5, marker = 'dsh_append_v1'): void {
    this.armed = { point, at, marker: Buffer.from(marker) }
  }

  /** Whether an armed cut is still waiting for its append. */
  get pending(): boolean {
    return this.armed !== undefined
  }

  /** Disarms a cut that did not happen. */
  disarm(): void {
    this.armed = undefined
  }

  /**
   * Holds all traffic of the connections open now, both ways. The returned function releases it:
   * held requests still reach the server even if their client gave up meanwhile.
   */
  hold(): () => void {
    const held = [...this.pairs]
    for (const pair of held) pair.held ??= { toServer: [], toClient: [] }
    return () => {
      for (const pair of held) {
        const queued = pair.held
        pair.held = undefined
        if (queued === undefined) continue
        for (const data of queued.toServer) if (!pair.server.destroyed) pair.server.write(data)
        for (const data of queued.toClient) if (!pair.client.destroyed) pair.client.write(data)
        if (pair.client.destroyed) pair.server.end()
      }
    }
  }

  /** Closes the listener and every connection. */
  async close(): Promise<void> {
    for (const pair of this.pairs) this.cut(pair, false)
    await new Promise<void>((resolve) => this.listener.close(() => resolve()))
  }

  private accept(client: net.Socket, host: string, port: number): void {
    this.stats.connections++
    const server = net.connect(port, host)
    const pair: Pair = { client, server }
    this.pairs.add(pair)
    client.on('data', (data: Buffer) => this.fromClient(pair, data))
    server.on('data', (data: Buffer) => this.fromServer(pair, data))
    const end = () => this.cut(pair, false)
    client.on('error', end)
    server.on('error', end)
    // A client that gave up while its traffic is held: the held request is still delivered.
    client.on('close', () => {
      if (pair.held === undefined) end()
    })
    server.on('close', end)
  }

  private fromClient(pair: Pair, data: Buffer): void {
    if (pair.held !== undefined) {
      pair.held.toServer.push(data)
      return
    }
    const armed = this.armed
    if (armed !== undefined && data.includes(armed.marker)) {
      this.armed = undefined
      switch (armed.point) {
        case 'before-send':
          this.cut(pair, true)
          return
        case 'mid-request': {
          const part = data.subarray(0, Math.max(1, Math.floor(data.length * armed.at)) - 1)
          pair.server.write(part, () => this.cut(pair, true))
          return
        }
        default:
          pair.cutReply = { point: armed.point, at: armed.at }
      }
    }
    pair.server.write(data)
  }

  private fromServer(pair: Pair, data: Buffer): void {
    if (pair.held !== undefined) {
      pair.held.toClient.push(data)
      return
    }
    const reply = pair.cutReply
    if (reply === undefined) {
      if (!pair.client.destroyed) pair.client.write(data)
      return
    }
    if (reply.point === 'after-commit') {
      this.cut(pair, true)
      return
    }
    const part = data.subarray(0, Math.floor(data.length * reply.at))
    pair.client.write(part, () => this.cut(pair, true))
  }

  private cut(pair: Pair, counted: boolean): void {
    if (!this.pairs.delete(pair)) return
    if (counted) this.stats.cuts++
    pair.client.destroy()
    pair.server.destroy()
  }
}
