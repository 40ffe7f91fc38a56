/** The channel between a mounted check and the registry that mounted it. */
import type { InvariantError } from './errors.ts'
import type { InvariantCounters, Violation } from './types.ts'

/** What a mounted check reports to its registry. Handed to the checks; not public. */
export interface CheckSink {
  /** Counts one unit of work. */
  count(counter: keyof InvariantCounters): void
  /** Records `violation` and returns the `InvariantError` the check must throw. */
  fail(violation: Violation): InvariantError
}
