/** The one check of a user message on its way in: a frozen, repaired copy, validated once. */
import { frozenCopy, type UserMessage, wellFormedJson } from 'dsh-llm'
import { SessionError } from './errors.ts'
import { isUserMessage } from './fast-blocks.ts'
import { formatPath } from './path.ts'
import { userMessageSchema } from './payload-schemas.ts'
import { snapshotJson } from './snapshot.ts'
import { isValidatedUserMessage, rememberValidated } from './validated-messages.ts'

/**
 * Returns `value` as a user message the log accepts: a detached, deep-frozen plain-JSON copy with
 * every lone surrogate replaced by U+FFFD, checked against `userMessageSchema`. The result is
 * remembered, so passing it again (here, to `session.append('user/message', …)`, or inside an
 * `agent/inbox/spliced` event) accepts it without a second check or copy; a message this function
 * returned before is returned as is. Throws `SessionError` `NOT_JSON` (what `snapshotJson` refuses)
 * or `INVALID_EVENT` (`<root><path> is invalid: <reason>`), each with `where.path` under `root`.
 */
export function validateUserMessage(value: unknown, root = 'message'): UserMessage {
  if (isValidatedUserMessage(value)) return value as UserMessage
  const plain = snapshotJson(value, 'user/message', root) as object
  const repaired = wellFormedJson(plain)
  const message = repaired === plain ? plain : frozenCopy(repaired)
  // The hand-written check decides the common case; zod only what it leaves open, and names defects.
  if (!isUserMessage(message)) {
    const parsed = userMessageSchema.safeParse(message)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const path = formatPath(root, issue?.path ?? [])
      throw new SessionError(
        'INVALID_EVENT',
        `${path} is invalid: ${issue?.message ?? 'not a user message'}`,
        {
          eventType: 'user/message',
          path,
        },
      )
    }
  }
  rememberValidated(message)
  return message as UserMessage
}
