/**
 * The stream grammar: what a well-formed model stream looks like, checked chunk by chunk. The
 * `BlockAssembler` tolerates malformed order on purpose; this is where malformed order is reported.
 */
import type { StreamChunk } from 'dsh-llm'

/** What a block under the grammar is: its declared type and whether `block-end` closed it. */
interface BlockState {
  readonly blockType: string
  closed: boolean
}

/** The block type a delta needs (a switch: a keyed lookup by the chunk's type goes megamorphic). */
function deltaBlockType(type: 'text-delta' | 'reasoning-delta' | 'tool-call-delta'): string {
  switch (type) {
    case 'text-delta':
      return 'text'
    case 'reasoning-delta':
      return 'reasoning'
    default:
      return 'tool-call'
  }
}

/**
 * Checks one stream. Rules: `block-start` opens an index not used before in this stream; a delta needs
 * an open block of its type (`text-delta` → `text`, `reasoning-delta` → `reasoning`,
 * `tool-call-delta` → `tool-call`); `block-end` closes an open block and carries a block of the type it
 * was opened with; at most one `usage`; nothing after `finish`; the stream ends with `finish`.
 *
 * `push` returns `undefined` for a chunk that fits, else a message describing the violation; the
 * grammar keeps going after a violation (the chunk is applied as far as it makes sense), so a caller
 * can collect every violation of a stream. `end` checks the end of the stream.
 */
export class StreamGrammar {
  private readonly blocks = new Map<number, BlockState>()
  /** The block last looked up or set, and its index: a stream's deltas mostly follow their block's start. */
  private lastIndex: number | undefined
  private lastBlock: BlockState | undefined
  private position = 0
  private usageAt: number | undefined
  private finishedAt: number | undefined

  /** True once a `finish` chunk was pushed. */
  get finished(): boolean {
    return this.finishedAt !== undefined
  }

  /** Checks the next chunk (numbered from 0 in the messages). */
  push(chunk: StreamChunk): string | undefined {
    const at = this.position++
    if (this.finishedAt !== undefined) {
      return `${label(at, chunk)} arrived after the finish chunk #${this.finishedAt}; a stream must end at its finish`
    }
    switch (chunk.type) {
      case 'block-start': {
        const previous = this.block(chunk.index)
        this.setBlock(chunk.index, { blockType: chunk.blockType, closed: false })
        if (previous === undefined) return undefined
        return `${label(at, chunk)} starts block ${chunk.index} again; it was already started as ${previous.blockType}${previous.closed ? ' and ended' : ''}`
      }
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-call-delta': {
        const wanted = deltaBlockType(chunk.type)
        const block = this.block(chunk.index)
        if (block === undefined) {
          return `${label(at, chunk)} needs an open ${wanted} block ${chunk.index}, but no block-start opened it`
        }
        if (block.closed)
          return `${label(at, chunk)} needs an open ${wanted} block ${chunk.index}, but that block already ended`
        if (block.blockType !== wanted) {
          return `${label(at, chunk)} needs an open ${wanted} block ${chunk.index}, but block ${chunk.index} is a ${block.blockType} block`
        }
        return undefined
      }
      case 'block-end': {
        const block = this.block(chunk.index)
        if (block === undefined) {
          this.setBlock(chunk.index, { blockType: chunk.block.type, closed: true })
          return `${label(at, chunk)} ends block ${chunk.index}, which no block-start opened`
        }
        if (block.closed) return `${label(at, chunk)} ends block ${chunk.index}, which already ended`
        block.closed = true
        if (block.blockType !== chunk.block.type) {
          return `${label(at, chunk)} carries a ${chunk.block.type} block, but block ${chunk.index} was started as ${block.blockType}`
        }
        return undefined
      }
      case 'usage':
        if (this.usageAt !== undefined)
          return `${label(at, chunk)} is a second usage chunk; the first was chunk #${this.usageAt}`
        this.usageAt = at
        return undefined
      case 'finish':
        this.finishedAt = at
        return undefined
      default: {
        const unknown: never = chunk
        return `${label(at, chunk)} has an unknown chunk type ${JSON.stringify((unknown as { type?: unknown }).type)}`
      }
    }
  }

  private block(index: number): BlockState | undefined {
    if (index === this.lastIndex) return this.lastBlock
    const block = this.blocks.get(index)
    if (block !== undefined) {
      this.lastIndex = index
      this.lastBlock = block
    }
    return block
  }

  private setBlock(index: number, block: BlockState): void {
    this.blocks.set(index, block)
    this.lastIndex = index
    this.lastBlock = block
  }

  /** Checks the end of the stream: `undefined` if a `finish` was seen, else the violation message. */
  end(): string | undefined {
    if (this.finishedAt !== undefined) return undefined
    return `the stream ended after ${this.position} chunk(s) without a finish chunk`
  }
}

/** How a message names a chunk: its position and description (`chunk #3 (text-delta index 0)`). */
function label(at: number, chunk: StreamChunk): string {
  return `chunk #${at} (${describeChunk(chunk)})`
}

/** A short description of a chunk for messages: its type and index (`text-delta index 0`). */
export function describeChunk(chunk: StreamChunk): string {
  return 'index' in chunk ? `${chunk.type} index ${chunk.index}` : String(chunk.type)
}
