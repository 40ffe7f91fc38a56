/** The receiving end of the mailbox's NOTIFY: one connection LISTENing on its channel, reconnecting after failures. */
import type pg from 'pg'
import { MAILBOX_CHANNEL } from './mailbox.ts'

/**
 * Calls `onSession(sessionId)` for every mailbox NOTIFY (a send or inject was accepted for that
 * session), and `onReconnect()` after its connection failed and was re-established, since
 * notifications may have been missed in between: the caller re-scans (`Mailbox.pending`,
 * `claimableSessions`). Holds one pool connection while listening; `stop()` returns it.
 */
export class MailboxListener {
  private client: pg.PoolClient | undefined
  private stopped = false
  private retry: NodeJS.Timeout | undefined

  /** Listens through a connection of `pool` once started; retries a lost connection every `retryMs`. */
  constructor(
    private readonly pool: pg.Pool,
    private readonly onSession: (sessionId: string) => void,
    private readonly onReconnect: () => void,
    private readonly retryMs = 500,
  ) {}

  /** Connects and LISTENs; resolves once listening. */
  async start(): Promise<void> {
    const client = await this.pool.connect()
    client.on('notification', (note) => {
      if (note.channel === MAILBOX_CHANNEL && note.payload !== undefined) this.onSession(note.payload)
    })
    client.on('error', () => this.lost(client))
    await client.query(`LISTEN ${MAILBOX_CHANNEL}`)
    this.client = client
  }

  /** Stops listening and returns the connection (destroyed if it failed). */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.retry)
    const client = this.client
    this.client = undefined
    if (client === undefined) return
    try {
      await client.query(`UNLISTEN ${MAILBOX_CHANNEL}`)
      client.release()
    } catch (error) {
      client.release(error instanceof Error ? error : true)
    }
  }

  private lost(client: pg.PoolClient): void {
    if (this.client !== client) return
    this.client = undefined
    client.release(true)
    this.reconnect()
  }

  private reconnect(): void {
    if (this.stopped) return
    this.retry = setTimeout(() => {
      this.start().then(this.onReconnect, () => this.reconnect())
    }, this.retryMs)
    this.retry.unref()
  }
}
