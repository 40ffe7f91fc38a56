/**
 * Keeping every failure when cleaning up after one fails too: the first error is never replaced
 * by the second, both stay reachable from what is thrown.
 */
import { SessionError, SessionErrorCode } from '../errors.ts'

/**
 * The cause to give an error thrown after `first` failed and cleaning up after it failed with
 * `second`: an `AggregateError` holding both, in that order (each keeps its own `cause` chain).
 * `second` undefined (the clean-up worked) gives `first` itself.
 */
export function bothFailures(first: unknown, second: unknown, what: string): unknown {
  if (second === undefined) return first
  return new AggregateError([first, second], `${what}: ${describe(first)}; then ${describe(second)}`)
}

/**
 * `first` rethrown after a clean-up that failed with `second`: a `SessionError` with `first`'s code
 * (`STORAGE` when `first` is not a `SessionError`) and where, saying both, whose `cause` is
 * `bothFailures(first, second)`. `second` undefined gives `first` unchanged.
 */
export function withCleanupFailure(first: unknown, second: unknown, cleanup: string): unknown {
  if (second === undefined) return first
  const code = first instanceof SessionError ? (first.code as SessionErrorCode) : SessionErrorCode.STORAGE
  const where = first instanceof SessionError ? first.where : {}
  return new SessionError(
    code,
    `${describe(first)} (and ${cleanup} failed too: ${describe(second)})`,
    where,
    { cause: bothFailures(first, second, cleanup) },
  )
}

/**
 * Every error reachable from `error`: itself, then depth first its `cause` chain and the members of
 * any `AggregateError` on the way. Route on the codes found here, never on message text.
 */
export function* errorChain(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>()
  const stack: unknown[] = [error]
  while (stack.length > 0) {
    const current = stack.pop()
    if (current === undefined || seen.has(current)) continue
    seen.add(current)
    yield current
    if (!(current instanceof Error)) continue
    if (current.cause !== undefined) stack.push(current.cause)
    if (current instanceof AggregateError)
      for (let i = current.errors.length - 1; i >= 0; i--) stack.push(current.errors[i])
  }
}

/** Whether `error` or anything in its `errorChain` is a `SessionError` with `code`. */
export function hasSessionCode(error: unknown, code: SessionErrorCode): boolean {
  for (const found of errorChain(error)) if (found instanceof SessionError && found.code === code) return true
  return false
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Awaits `work`: `undefined` when it resolved, its rejection reason when it rejected. */
export async function failureOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work
    return undefined
  } catch (error) {
    return error ?? new Error('rejected without a reason')
  }
}
