/**
 * Sends a prompt to a fleet session from any machine, creating the session if it is new:
 *   DATABASE_URL=postgres://... node dist/send.js <sessionId> "<text>"
 * Prints the acceptance once the message is durable, then waits (up to 60 s) until a host logged it.
 */
import { SessionId, userText } from 'dsh-llm'
import { Mailbox, PgSessionError, PgSessionErrorCode } from 'dsh-session-postgres'
import pg from 'pg'

const [id, text] = process.argv.slice(2)
const url = process.env.DATABASE_URL
if (url === undefined || url === '' || id === undefined || text === undefined) {
  throw new Error('usage: DATABASE_URL=postgres://... node dist/send.js <sessionId> "<text>"')
}
const pool = new pg.Pool({ connectionString: url, max: 2 })
const mailbox = new Mailbox(pool)
const sessionId = SessionId(id)
await mailbox.createSession(sessionId).catch((error: unknown) => {
  // An existing session is fine: the send goes to it.
  if (!(error instanceof PgSessionError && error.code === PgSessionErrorCode.SEND_REFUSED)) throw error
})
const accepted = await mailbox.send(sessionId, userText(text), { sender: 'send.ts' })
console.log(`accepted ${accepted.messageId} for ${sessionId} (mailbox #${accepted.mailboxId})`)
const deadline = Date.now() + 60_000
for (;;) {
  const state = await mailbox.state(sessionId, accepted.messageId)
  if (state.state !== 'pending') {
    console.log(state.state === 'delivered' ? `logged at seq ${state.seq}` : `refused: ${state.reason}`)
    break
  }
  if (Date.now() > deadline) {
    console.log('still pending: is a host running?')
    break
  }
  await new Promise((resolve) => setTimeout(resolve, 200))
}
await pool.end()
