/**
 * Message = its chunks: a committed assistant message must be what the `BlockAssembler` (the loop's
 * own assembly rules) makes of the `assistant/chunk` events logged for its model call, and an
 * interrupted one the assembled prefix the loop keeps on cancel (`interruptedBlocks`).
 */
import { BlockAssembler, type StreamChunk } from 'dsh-llm'
import type { SessionEventMap } from 'dsh-session'
import { excerpt, firstDifference } from '../derive/compare.ts'

/** The chunks of the model call in progress within one step, assembled as they are logged. */
export class CallAssembly {
  private assembler: BlockAssembler | undefined
  private firstSeq = -1
  private chunks = 0

  /** Accounts for one logged chunk. A chunk after the call's `finish` starts the next call. */
  chunk(chunk: StreamChunk, seq: number): void {
    if (this.assembler === undefined || this.assembler.isFinished) {
      this.assembler = new BlockAssembler()
      this.firstSeq = seq
      this.chunks = 0
    }
    this.chunks++
    try {
      this.assembler.push(chunk)
    } catch {
      // A chunk type outside the closed union: the event schema refuses it before it gets here.
    }
  }

  /** The call ended without an answer (a retry, a tool or step boundary): forget its chunks. */
  end(): void {
    this.assembler = undefined
  }

  /**
   * Why `data` (an `assistant/message` about to commit) is not the assembly of the current call's
   * chunks, or `undefined` when it is. Pure: `end()` forgets the call once the message committed.
   */
  check(data: SessionEventMap['assistant/message']): string | undefined {
    const { message } = data
    const assembler = this.assembler
    if (assembler === undefined) {
      return `carries message ${message.id}, but no assistant/chunk was logged for it: an answer is the assembly of its model call's chunks`
    }
    const interrupted = data.interrupted === true
    const expected = interrupted ? assembler.interruptedBlocks() : assembler.blocks()
    const difference = firstDifference(expected, message.content, 'content')
    if (difference === undefined) return undefined
    const what = interrupted ? 'the interrupted prefix assembled from' : 'the assembly of'
    return `carries message ${message.id}, which is not ${what} its ${this.chunks} assistant/chunk event(s) from seq ${this.firstSeq}: at ${difference.path} the chunks assemble ${excerpt(difference.expected)}, the message has ${excerpt(difference.found)}`
  }
}
