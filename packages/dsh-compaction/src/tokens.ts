/**
 * Token estimates for what no provider has counted yet: a message, a header, a request. The default
 * counter is `ceil(characters / 4)`; an app with a real tokenizer passes it as `countTokens`.
 */
import type { ContentBlock, LlmRequest, Message } from 'dsh-llm'
import type { RequestHeader } from 'dsh-session'
import type { CountTokens } from './types.ts'

/** Overhead counted per message (role and framing), in tokens. */
const PER_MESSAGE = 4
/** Overhead counted per structured block (a call's or result's framing), in tokens. */
const PER_BLOCK = 4

/** `ceil(text.length / 4)`: about right for English prose and JSON with common tokenizers. */
export const charsPerFour: CountTokens = (text) => Math.ceil(text.length / 4)

/** Estimates tokens of messages and headers; caches per (frozen) message object. */
export class TokenEstimator {
  readonly #count: CountTokens
  readonly #cache = new WeakMap<Message, number>()

  constructor(count: CountTokens = charsPerFour) {
    this.#count = count
  }

  /** Tokens of `text`. */
  text(text: string): number {
    return this.#count(text)
  }

  /** Tokens of one message: its blocks plus a fixed framing overhead. */
  message(message: Message): number {
    const cached = this.#cache.get(message)
    if (cached !== undefined) return cached
    let total = PER_MESSAGE
    for (const block of message.content) total += this.block(block)
    this.#cache.set(message, total)
    return total
  }

  /** Tokens of `messages[from, to)`. */
  messages(messages: readonly Message[], from = 0, to = messages.length): number {
    let total = 0
    for (let i = from; i < to; i++) {
      const message = messages[i]
      if (message !== undefined) total += this.message(message)
    }
    return total
  }

  /** Tokens of a header's system prompt, tool schemas and session prefix. */
  header(header: RequestHeader | undefined): number {
    if (header === undefined) return 0
    let total = header.system === undefined ? 0 : this.text(header.system)
    if (header.tools !== undefined) total += this.text(JSON.stringify(header.tools))
    if (header.messagePrefix !== undefined) total += this.messages(header.messagePrefix)
    return total
  }

  /** Tokens of a whole request: system, tools and messages. */
  request(request: LlmRequest): number {
    let total = request.system === undefined ? 0 : this.text(request.system)
    if (request.tools !== undefined) total += this.text(JSON.stringify(request.tools))
    return total + this.messages(request.messages)
  }

  private block(block: ContentBlock): number {
    switch (block.type) {
      case 'text':
      case 'reasoning':
        return this.text(block.text)
      case 'tool-call':
        return PER_BLOCK + this.text(block.name) + this.text(block.arguments)
      case 'tool-result': {
        let total = PER_BLOCK
        for (const inner of block.content) total += this.block(inner)
        return total
      }
      default:
        // Open union: a plugin's block type is counted by its JSON text.
        return PER_BLOCK + this.text(JSON.stringify(block))
    }
  }
}
