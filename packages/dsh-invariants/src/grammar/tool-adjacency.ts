/**
 * Tool adjacency over a message history: after an assistant message with tool calls come exactly the
 * results of those calls, one each, in the order the model made them, with no user or assistant
 * message in between. Checked incrementally, one message at a time, so a history is checked once
 * however many requests derive from it.
 */
import { isToolResultMessage, type Message } from 'dsh-llm'

/** Where a history breaks adjacency: the offending message's position and what is wrong. */
export interface AdjacencyProblem {
  /** Index of the offending message in the history. */
  readonly index: number
  readonly message: string
}

/** Follows one history message by message. `push` returns the problem a message causes, if any. */
export class ToolAdjacency {
  private pending: readonly string[] = []
  private answered = 0
  private callsAt = -1
  private count = 0

  /** The calls of the latest assistant message that have no result yet, in model order. */
  get unanswered(): readonly string[] {
    return this.pending.slice(this.answered)
  }

  /** Index of the assistant message whose calls are pending (meaningful while `unanswered` is non-empty). */
  get callsIndex(): number {
    return this.callsAt
  }

  /** Forgets everything: the next `push` is message 0. */
  reset(): void {
    this.pending = []
    this.answered = 0
    this.callsAt = -1
    this.count = 0
  }

  /** Checks `message` as the next message of the history, then accounts for it. */
  push(message: Message): AdjacencyProblem | undefined {
    const index = this.count++
    const due = this.pending[this.answered]
    if (isToolResultMessage(message)) {
      const callId = message.content[0].toolCallId
      if (due === callId) {
        this.answered++
        return undefined
      }
      const problem =
        due === undefined
          ? `tool result for call ${callId} follows no pending call: each call has exactly one result, right after the assistant message that made it`
          : `tool result for call ${callId} arrives while call ${due} of message ${this.callsAt} is due: results follow in the order the model made the calls`
      return { index, message: problem }
    }
    let problem: AdjacencyProblem | undefined
    if (due !== undefined) {
      problem = {
        index,
        message: `${message.role} message ${message.id} stands between the tool calls of message ${this.callsAt} and their results (unanswered: ${this.unanswered.join(', ')})`,
      }
    }
    const calls: string[] = []
    if (message.role === 'assistant') {
      for (const block of message.content) if (block.type === 'tool-call') calls.push(block.id)
    }
    this.pending = calls
    this.answered = 0
    this.callsAt = calls.length > 0 ? index : -1
    return problem
  }
}
