/**
 * User messages checked at the door: before `send`, `steer` or `inject` stages anything, and
 * before a listener's messages (pre-step batch, additional contexts) reach the log.
 */
import { frozenCopy, type UserMessage, wellFormedJson } from 'dsh-llm'
import { isUserMessage, SessionError, snapshotJson, userMessageSchema } from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode } from '../errors.ts'

/**
 * Returns `value` as a user message the log accepts — an object with a non-empty string `id`,
 * role `user`, valid content blocks and source, all plain JSON — with every lone surrogate
 * replaced by U+FFFD (a frozen copy then; else `value` itself). Throws `AgentLoopError`
 * `INVALID_MESSAGE` whose message starts with `where` and names the field.
 */
export function checkUserMessage(where: string, value: unknown): UserMessage {
  const problem = messageProblem(value)
  if (problem !== undefined) {
    throw new AgentLoopError(AgentLoopErrorCode.INVALID_MESSAGE, `${where}: ${problem}`)
  }
  const message = value as UserMessage
  const repaired = wellFormedJson(message)
  return repaired === message ? message : frozenCopy(repaired)
}

function messageProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return `the message must be an object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}`
  }
  const { id, role } = value as { id?: unknown; role?: unknown }
  if (role !== 'user') return `role must be "user", got ${String(JSON.stringify(role) ?? role)}`
  if (typeof id !== 'string' || id === '')
    return `id must be a non-empty string, got ${String(JSON.stringify(id) ?? id)}`
  let plain: unknown
  try {
    plain = snapshotJson(value, 'user/message', 'message')
  } catch (error) {
    if (error instanceof SessionError && error.where.path !== undefined) {
      const at = error.message.indexOf(error.where.path)
      return `message ${id}: ${error.message.slice(at).replace(/; event data must be plain JSON$/, '')}`
    }
    throw error
  }
  // The hand-written check decides the common case; zod only what it leaves open, and names defects.
  if (isUserMessage(plain)) return undefined
  const parsed = userMessageSchema.safeParse(plain)
  if (parsed.success) return undefined
  const issue = parsed.error.issues[0]
  const path = (issue?.path ?? [])
    .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
    .join('')
  return `message ${id}: message${path} is invalid: ${issue?.message ?? 'not a user message'}`
}
