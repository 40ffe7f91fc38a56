/**
 * Recording mailbox deliveries with the append that logs them: the events of a batch that carry an
 * awaited message id, and the statement that marks those mailbox rows delivered (once).
 */
import type { SessionId } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'
import type pg from 'pg'
import { PgSessionError, PgSessionErrorCode } from './errors.ts'

/** A mailbox row recorded by an event of a batch. */
export interface Delivery {
  readonly mailboxId: string
  readonly messageId: string
  readonly seq: number
}

/** The message ids an event records as accepted: a splice's inserted messages, a user message's id. */
export function recordedMessageIds(event: SessionEvent): readonly string[] {
  if (event.type === 'agent/inbox/spliced') return event.data.inserted.map((message) => message.id)
  if (event.type === 'user/message') return [event.data.id]
  return []
}

/** The deliveries among `events`: the first event recording each awaited message id. */
export function deliveriesIn(
  events: readonly SessionEvent[],
  awaited: ReadonlyMap<string, string>,
): Delivery[] {
  const found: Delivery[] = []
  const seen = new Set<string>()
  for (const event of events) {
    for (const messageId of recordedMessageIds(event)) {
      const mailboxId = awaited.get(messageId)
      if (mailboxId === undefined || seen.has(messageId)) continue
      seen.add(messageId)
      found.push({ mailboxId, messageId, seq: event.seq })
    }
  }
  return found
}

const MARK_SQL = `
UPDATE dsh_mailbox AS m SET delivered_seq = d.seq
FROM unnest($2::bigint[], $3::bigint[]) AS d(id, seq)
WHERE m.id = d.id AND m.session_id = $1 AND m.delivered_seq IS NULL`

/**
 * Marks `deliveries` delivered at their seqs, inside the caller's transaction. Throws
 * `DELIVERY_CONFLICT` (the caller rolls back) if any row was already delivered.
 */
export async function markDelivered(
  client: pg.PoolClient,
  sessionId: SessionId,
  deliveries: readonly Delivery[],
): Promise<void> {
  const ids = deliveries.map((delivery) => delivery.mailboxId)
  const seqs = deliveries.map((delivery) => delivery.seq)
  const marked = await client.query(MARK_SQL, [sessionId, ids, seqs])
  if (marked.rowCount !== deliveries.length) {
    const list = deliveries.map((delivery) => delivery.messageId).join(', ')
    throw new PgSessionError(
      PgSessionErrorCode.DELIVERY_CONFLICT,
      `session ${sessionId}: mailbox messages ${list} were already delivered; refusing to log them twice`,
      { sessionId, seq: deliveries[0]?.seq ?? -1 },
    )
  }
}
