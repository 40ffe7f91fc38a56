/**
 * The tool-call ids a session's history uses, as one agent's stream guards ask about them: the
 * agent's `callIds` book (see `ModelCallEnv.callIds`), held compactly between turns.
 */
import type { Session } from 'dsh-session'
import type { CallIdBook } from './model/model-call.ts'

/**
 * Folded from the session's surface on the first `has` (a stream with a tool call), then extended
 * by `add` as answers commit; an `add` before the fold is left to the fold, which reads the answer
 * from the history. Between turns (`settle`) the ids wait in a plain array, and the next `has`
 * rebuilds the set from it: an idle agent holds ~8 bytes per id instead of a hash set with its
 * growth room. The rename hints (`nextSuffix`) exist from the first rename on.
 */
export class CallIdLedger implements CallIdBook {
  /** The ids: a set while a turn asks about them, an array between turns, `undefined` until folded. */
  private ids: Set<string> | string[] | undefined
  private suffixes: Map<string, number> | undefined

  constructor(private readonly session: Session) {}

  /** Per original id: the suffix its next rename starts probing at (made on first use). */
  get nextSuffix(): Map<string, number> {
    this.suffixes ??= new Map()
    return this.suffixes
  }

  has(id: string): boolean {
    return this.set().has(id)
  }

  add(id: string): void {
    if (this.ids === undefined) return
    this.set().add(id)
  }

  /** Keeps the ids as an array until the next `has` (the turn is over). */
  settle(): void {
    if (this.ids instanceof Set) this.ids = [...this.ids]
  }

  private set(): Set<string> {
    const ids = this.ids
    if (ids instanceof Set) return ids
    const set = ids === undefined ? this.fold() : new Set(ids)
    this.ids = set
    return set
  }

  private fold(): Set<string> {
    const ids = new Set<string>()
    for (const message of this.session.deriveMessages()) {
      for (const block of message.content) {
        if (block.type === 'tool-call') ids.add(block.id)
        else if (block.type === 'tool-result') ids.add(block.toolCallId)
      }
    }
    return ids
  }
}
