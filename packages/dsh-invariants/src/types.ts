/** Types of the invariant checks: check names, violations, configuration and counters. Types only. */

/**
 * Closed: the checks this package ships. `request-reconstruction` re-derives every loop-built request
 * from the log; `log-grammar` checks each event before it commits; `stream-grammar` checks every chunk
 * of every model stream.
 */
export type CheckName = 'request-reconstruction' | 'log-grammar' | 'stream-grammar'

/** One broken invariant, as data. */
export interface Violation {
  readonly check: CheckName
  /** The seq of the offending event, when the violation is about one event. */
  readonly seq?: number
  /** What was expected, what was found, and where — for a person to act on. */
  readonly message: string
  /** The session the violation was found in, when known (online checks always know it). */
  readonly sessionId?: string
  /**
   * Offline only: the 0-based position of the offending event in the array that was checked. It equals
   * `seq` in a contiguous log; the CLI uses it to name the file line (`index + 2`).
   */
  readonly index?: number
}

/** Plugin configuration of `Invariants`: which checks to mount. Unknown names are refused. */
export interface InvariantsConfig {
  /** Mount only these checks (default: all). */
  readonly only?: readonly CheckName[]
  /** Mount every check except these (applied after `only`). */
  readonly skip?: readonly CheckName[]
}

/** How much a registry has checked since it was mounted. */
export interface InvariantCounters {
  /**
   * Requests that reached an adapter attributed to a loop step (or carrying a loop mark), re-derived
   * from the log and compared at that boundary.
   */
  readonly requestsChecked: number
  /**
   * Requests that reached an adapter outside any loop step (a plugin calling a model on its own):
   * allowed, not re-derived, announced as `invariants/request-outside-step`.
   */
  readonly requestsOutsideSteps: number
  /** Candidate events checked by the log grammar before they committed. */
  readonly eventsChecked: number
  /** Model streams wrapped by the stream grammar. */
  readonly streamsChecked: number
}
