/**
 * The user messages dsh-session's own checker (`validateUserMessage`) accepted. Each was made by
 * that checker as a detached, deep-frozen plain-JSON copy and can never change, so accepting it again
 * needs no second check: the append path, the inbox splice and the agent loop trust exactly these.
 * Only `validateUserMessage` adds to the set.
 */
const validated = new WeakSet<object>()

/** Whether `value` is a message `validateUserMessage` returned (so still valid, being deep-frozen). */
export function isValidatedUserMessage(value: unknown): boolean {
  return typeof value === 'object' && value !== null && validated.has(value)
}

/** Records `message` as validated. Only for the frozen copy `validateUserMessage` built and checked. */
export function rememberValidated(message: object): void {
  validated.add(message)
}
