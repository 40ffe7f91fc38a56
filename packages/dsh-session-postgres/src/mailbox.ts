/**
 * The durable mailbox: sends and injects addressed to a session by id, from any process. A message
 * is accepted when its row commits (with a NOTIFY that wakes the holder); the holder logs it later,
 * marking the row delivered in the same transaction (see `deliveries.ts`).
 */
import { deepFreeze, type SessionId, type UserMessage } from 'dsh-llm'
import { SESSION_FORMAT_VERSION, snapshotJson, userMessageSchema } from 'dsh-session'
import type pg from 'pg'
import { PgSessionError, PgSessionErrorCode } from './errors.ts'
import { surviveIdleErrors } from './pool-errors.ts'

/** The NOTIFY channel a send wakes; the payload is the session id. */
export const MAILBOX_CHANNEL = 'dsh_mailbox'

/** How a send is delivered: the same choices as `Agent.send`. */
export interface MailboxSendOptions {
  /** Which inbox list the message joins. Default `next-turn`. */
  readonly target?: 'next-turn' | 'next-step'
  /** Whether the delivery starts a turn when the agent is idle. Default `true`. */
  readonly wakeup?: boolean
  /** Who sent it (free text, kept on the row for audits). */
  readonly sender?: string
}

/** A durable acceptance: the message is in the mailbox and will be logged exactly once. */
export interface Acceptance {
  readonly sessionId: SessionId
  readonly messageId: string
  /** The mailbox row id: delivery order for the session. */
  readonly mailboxId: string
  /** Database time of acceptance (epoch ms). */
  readonly acceptedAt: number
}

/** Where a mailbox message stands. */
export type DeliveryState =
  | { readonly state: 'pending' }
  | { readonly state: 'delivered'; readonly seq: number }
  | { readonly state: 'refused'; readonly reason: string }

/** A pending row, as a holder reads it. */
export interface PendingMessage {
  readonly mailboxId: string
  readonly messageId: string
  readonly kind: 'send' | 'inject'
  readonly target: 'next-turn' | 'next-step'
  readonly wakeup: boolean
  readonly message: UserMessage
}

const SEND_SQL = `
WITH m AS (
  INSERT INTO dsh_mailbox (session_id, message_id, kind, target, wakeup, sender, message)
  SELECT id, $2, $3, $4, $5, $6, $7 FROM dsh_sessions WHERE id = $1
  ON CONFLICT (session_id, message_id) DO NOTHING
  RETURNING id, session_id, accepted_at
)
SELECT id::text AS id, (extract(epoch FROM accepted_at) * 1000)::bigint::text AS accepted_at,
       pg_notify('${MAILBOX_CHANNEL}', session_id) AS notified
FROM m`

/**
 * Sends to sessions of a fleet from any process holding a pool on its database. Sessions need not
 * be open anywhere: a message waits until a host holds the session.
 */
export class Mailbox {
  constructor(private readonly pool: pg.Pool) {
    // A sender process must outlive a database restart too; its next send reports the outage.
    surviveIdleErrors(pool)
  }

  /**
   * Registers a new session with a free lease, so any host can claim it when work arrives. Throws
   * `SessionError` `ALREADY_EXISTS`-like `SEND_REFUSED` if the id is taken.
   */
  async createSession(sessionId: SessionId, createdAt = Date.now()): Promise<void> {
    const created = await this.pool.query(
      `WITH s AS (
         INSERT INTO dsh_sessions (id, format_version, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (id) DO NOTHING RETURNING id
       )
       INSERT INTO dsh_leases (session_id, owner, token, expires_at) SELECT id, NULL, 0, NULL FROM s`,
      [sessionId, SESSION_FORMAT_VERSION, createdAt],
    )
    if (created.rowCount !== 1) {
      throw new PgSessionError(PgSessionErrorCode.SEND_REFUSED, `session ${sessionId} already exists`, {
        sessionId,
      })
    }
  }

  /**
   * Accepts `message` for `sessionId` with `Agent.send` semantics (target, wakeup): resolves once the
   * row is committed (durable), with its mailbox id. Throws `SEND_REFUSED` for an unknown session,
   * an invalid message, or a message id already sent to this session.
   */
  send(sessionId: SessionId, message: UserMessage, options: MailboxSendOptions = {}): Promise<Acceptance> {
    return this.accept(sessionId, message, 'send', options)
  }

  /** Accepts `message` for `sessionId` with `Agent.inject` semantics; durable when it resolves. */
  inject(sessionId: SessionId, message: UserMessage, options: Pick<MailboxSendOptions, 'sender'> = {}) {
    return this.accept(sessionId, message, 'inject', options)
  }

  /** Where message `messageId` sent to `sessionId` stands. Throws `SEND_REFUSED` if never accepted. */
  async state(sessionId: SessionId, messageId: string): Promise<DeliveryState> {
    const found = await this.pool.query<{ delivered_seq: string | null; refused: string | null }>(
      'SELECT delivered_seq::text AS delivered_seq, refused FROM dsh_mailbox WHERE session_id = $1 AND message_id = $2',
      [sessionId, messageId],
    )
    const row = found.rows[0]
    if (row === undefined) {
      throw new PgSessionError(
        PgSessionErrorCode.SEND_REFUSED,
        `session ${sessionId}: no message ${messageId} was accepted`,
        { sessionId, messageId },
      )
    }
    if (row.refused !== null) return { state: 'refused', reason: row.refused }
    if (row.delivered_seq !== null) return { state: 'delivered', seq: Number(row.delivered_seq) }
    return { state: 'pending' }
  }

  /** The pending messages of `sessionId`, in acceptance order. */
  async pending(sessionId: SessionId): Promise<PendingMessage[]> {
    const rows = await this.pool.query<{
      id: string
      message_id: string
      kind: 'send' | 'inject'
      target: 'next-turn' | 'next-step' | null
      wakeup: boolean
      message: unknown
    }>(
      // Order by the bigint column: the text alias would sort '10' before '9'.
      `SELECT m.id::text AS id, m.message_id, m.kind, m.target, m.wakeup, m.message FROM dsh_mailbox m
       WHERE m.session_id = $1 AND m.delivered_seq IS NULL AND m.refused IS NULL ORDER BY m.id`,
      [sessionId],
    )
    return rows.rows.map((row) => ({
      mailboxId: row.id,
      messageId: row.message_id,
      kind: row.kind,
      target: row.target ?? 'next-turn',
      wakeup: row.wakeup,
      message: checkedUserMessage(row.message),
    }))
  }

  /** Marks a pending row refused (the holder could not deliver it), so it is not retried forever. */
  async refuse(mailboxId: string, reason: string): Promise<void> {
    await this.pool.query(
      'UPDATE dsh_mailbox SET refused = $2 WHERE id = $1 AND delivered_seq IS NULL AND refused IS NULL',
      [mailboxId, reason],
    )
  }

  private async accept(
    sessionId: SessionId,
    message: UserMessage,
    kind: 'send' | 'inject',
    options: MailboxSendOptions,
  ): Promise<Acceptance> {
    const refused = (why: string, cause?: unknown) =>
      new PgSessionError(
        PgSessionErrorCode.SEND_REFUSED,
        `session ${sessionId}: ${kind} of message ${String(message?.id)} refused: ${why}`,
        { sessionId, messageId: String(message?.id) },
        cause === undefined ? undefined : { cause },
      )
    let plain: UserMessage
    try {
      plain = checkedUserMessage(snapshotJson(message, 'user/message'))
    } catch (error) {
      throw refused(
        `not a valid user message: ${error instanceof Error ? error.message : String(error)}`,
        error,
      )
    }
    const target = kind === 'send' ? (options.target ?? 'next-turn') : null
    const accepted = await this.pool.query<{ id: string; accepted_at: string }>(SEND_SQL, [
      sessionId,
      plain.id,
      kind,
      target,
      options.wakeup ?? true,
      options.sender ?? null,
      JSON.stringify(plain),
    ])
    const row = accepted.rows[0]
    if (row !== undefined) {
      return { sessionId, messageId: plain.id, mailboxId: row.id, acceptedAt: Number(row.accepted_at) }
    }
    const exists = await this.pool.query('SELECT 1 FROM dsh_sessions WHERE id = $1', [sessionId])
    throw refused(exists.rowCount === 0 ? 'no such session' : 'a message with this id was already sent to it')
  }
}

/** `value` checked against the user-message schema, frozen. Throws the schema's error. */
function checkedUserMessage(value: unknown): UserMessage {
  // The schema is the catalog's own definition of a user message; its output type is looser than
  // the branded `UserMessage`, hence the widening cast after a successful parse.
  return deepFreeze(userMessageSchema.parse(value)) as unknown as UserMessage
}
