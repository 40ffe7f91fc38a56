/**
 * The loop's outbox: model-facing messages accepted while a turn executes (`inject()` during the
 * turn, `additionalContexts` from `tools/post-execute`). In memory only; the loop drains it whole at
 * safe boundaries so nothing lands inside an assistant tool-call batch.
 */
import type { UserMessage } from 'dsh-llm'
import type { Session } from 'dsh-session'

/** A FIFO of staged messages. */
export class Outbox {
  /** The staged messages, oldest first; made on the first push (most agents never stage one). */
  private items: UserMessage[] | undefined

  /** How many messages are staged. */
  get size(): number {
    return this.items === undefined ? 0 : this.items.length
  }

  /** Stages `message` behind everything already staged. */
  push(message: UserMessage): void {
    this.items ??= []
    this.items.push(message)
  }

  /**
   * Appends every staged message to `session` as its own `user/message`, oldest first, and leaves
   * the outbox empty. Returns how many were appended. A message staged by a listener while this
   * drain runs is appended by the same drain.
   */
  drain(session: Session): number {
    let count = 0
    while (this.items !== undefined && this.items.length > 0) {
      const batch = this.items
      this.items = undefined
      for (const message of batch) session.append('user/message', message)
      count += batch.length
    }
    return count
  }
}
