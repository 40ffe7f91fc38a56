import { HarnessError } from 'dsh-llm'
import type { CheckName, Violation } from './types.ts'

/** Stable error codes of dsh-invariants. Route on these, never on message text. */
export const InvariantErrorCode = {
  /** A check found a broken invariant. */
  INVARIANT: 'INVARIANT',
  /** The plugin configuration names a check that does not exist, or is malformed. */
  INVALID_OPTIONS: 'INVALID_OPTIONS',
} as const

/** One of the codes above. */
export type InvariantErrorCode = (typeof InvariantErrorCode)[keyof typeof InvariantErrorCode]

/**
 * A broken invariant, thrown by a mounted check. `check` names the check and `seq` the offending event
 * when there is one. The message reads `[check] seq N: <what was expected, what was found>` (without
 * ` seq N` when there is no event to name); `violation` holds the same facts as data.
 */
export class InvariantError extends HarnessError {
  override readonly code: 'INVARIANT' = InvariantErrorCode.INVARIANT
  readonly check: CheckName
  readonly seq?: number
  readonly sessionId?: string
  readonly violation: Violation

  constructor(violation: Violation) {
    super(InvariantErrorCode.INVARIANT, formatViolation(violation))
    this.name = 'InvariantError'
    this.check = violation.check
    if (violation.seq !== undefined) this.seq = violation.seq
    if (violation.sessionId !== undefined) this.sessionId = violation.sessionId
    this.violation = violation
  }
}

/** `[check] seq N: message`, or `[check] message` when the violation names no seq. */
export function formatViolation(violation: Violation): string {
  const where = violation.seq === undefined ? '' : ` seq ${violation.seq}:`
  return `[${violation.check}]${where} ${violation.message}`
}
