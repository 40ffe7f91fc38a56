/**
 * User messages checked at the door: before `send`, `steer` or `inject` stages anything, and
 * before a listener's messages (pre-step batch, additional contexts) reach the log.
 */
import { isRecord, type UserMessage } from 'dsh-llm'
import { isValidatedUserMessage, SessionError, validateUserMessage } from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode } from '../errors.ts'

/**
 * Returns `value` as a user message the log accepts — an object with a non-empty string `id`,
 * role `user`, valid content blocks and source, all plain JSON — as dsh-session's checked, frozen
 * copy with every lone surrogate replaced by U+FFFD (`validateUserMessage`); a message it checked
 * before (one that went through the inbox) is returned as is, unchecked again. Throws
 * `AgentLoopError` `INVALID_MESSAGE` whose message starts with `where` and names the field.
 */
export function checkUserMessage(where: string, value: unknown): UserMessage {
  if (isValidatedUserMessage(value)) return value as UserMessage
  const problem = shapeProblem(value)
  if (problem !== undefined) {
    throw new AgentLoopError(AgentLoopErrorCode.INVALID_MESSAGE, `${where}: ${problem}`)
  }
  try {
    return validateUserMessage(value, 'message')
  } catch (error) {
    if (!(error instanceof SessionError) || error.where.path === undefined) throw error
    const id = (value as { id: string }).id
    const at = error.message.indexOf(error.where.path)
    const what = error.message.slice(at).replace(/; event data must be plain JSON$/, '')
    throw new AgentLoopError(AgentLoopErrorCode.INVALID_MESSAGE, `${where}: message ${id}: ${what}`)
  }
}

function shapeProblem(value: unknown): string | undefined {
  if (!isRecord(value)) {
    return `the message must be an object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}`
  }
  const { id, role } = value as { id?: unknown; role?: unknown }
  if (role !== 'user') return `role must be "user", got ${String(JSON.stringify(role) ?? role)}`
  if (typeof id !== 'string' || id === '')
    return `id must be a non-empty string, got ${String(JSON.stringify(id) ?? id)}`
  return undefined
}
