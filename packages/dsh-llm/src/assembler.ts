/**
 * Turns a model stream into content blocks. Tolerant by design: malformed chunk order is ignored
 * here, and reported by the stream-grammar invariant instead.
 */
import { assertNever } from './assert.ts'
import { frozenCopy, markDetached } from './freeze.ts'
import { CallId } from './ids.ts'
import type { StreamChunk, Usage } from './stream.ts'
import type { ContentBlock, ContentBlockType, FinishReason } from './vocabulary.ts'

/** Options of a `BlockAssembler`. */
export interface BlockAssemblerOptions {
  /**
   * Prefix of the id given to a tool call whose deltas never carried one: the id is the prefix
   * followed by the block index (`dsh-call-0`, `dsh-call-3`). Default `'dsh-call-'`.
   */
  readonly missingCallIdPrefix?: string
}

/** One block under assembly. Text is kept with `+=` on its own string: linear, no snapshots. */
interface Slot {
  readonly index: number
  readonly blockType: ContentBlockType | (string & {})
  closed: boolean
  /** The authoritative block from `block-end`, frozen. */
  final: ContentBlock | undefined
  text: string
  id: CallId | undefined
  name: string | undefined
}

const STOP: FinishReason = Object.freeze({ kind: 'stop' })

/**
 * Assembles `StreamChunk`s into `ContentBlock`s: the one place chunks become blocks.
 *
 * Tolerance (each silently ignored, never thrown): a delta after its block's `block-end`, a second
 * `block-end`, a duplicate `block-start`, a delta whose kind does not match its block's type, and
 * every chunk after `finish`. A delta for an index never started opens that block implicitly with
 * the delta's type. `block-end` is authoritative: its block replaces whatever the deltas built.
 * Blocks keep the order in which their index was first seen. Cost is linear in the chunk count.
 *
 * `push` throws only for a chunk whose `type` is outside the closed `StreamChunk` union.
 */
export class BlockAssembler {
  private readonly slots = new Map<number, Slot>()
  private readonly order: Slot[] = []
  private readonly callIdPrefix: string
  private reason: FinishReason | undefined
  private lastUsage: Usage | undefined
  private cached: readonly ContentBlock[] | undefined

  constructor(options: BlockAssemblerOptions = {}) {
    this.callIdPrefix = options.missingCallIdPrefix ?? 'dsh-call-'
  }

  /** True once a `finish` chunk has been pushed; later chunks are ignored. */
  get isFinished(): boolean {
    return this.reason !== undefined
  }

  /** Feeds one chunk. See the class comment for what is ignored. */
  push(chunk: StreamChunk): void {
    if (this.reason !== undefined) return
    switch (chunk.type) {
      case 'block-start':
        if (!this.slots.has(chunk.index)) this.open(chunk.index, chunk.blockType)
        return
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = chunk.type === 'text-delta' ? 'text' : 'reasoning'
        const slot = this.slots.get(chunk.index) ?? this.open(chunk.index, kind)
        if (slot.closed || slot.blockType !== kind) return
        slot.text += chunk.text
        this.cached = undefined
        return
      }
      case 'tool-call-delta': {
        const slot = this.slots.get(chunk.index) ?? this.open(chunk.index, 'tool-call')
        if (slot.closed || slot.blockType !== 'tool-call') return
        if (slot.id === undefined && chunk.id !== undefined && chunk.id !== '') slot.id = chunk.id
        if (slot.name === undefined && chunk.name !== undefined && chunk.name !== '') slot.name = chunk.name
        slot.text += chunk.argumentsDelta
        this.cached = undefined
        return
      }
      case 'block-end': {
        const slot = this.slots.get(chunk.index) ?? this.open(chunk.index, chunk.block.type)
        if (slot.closed) return
        slot.closed = true
        slot.final = frozenCopy(this.withCallId(slot, chunk.block))
        slot.text = ''
        this.cached = undefined
        return
      }
      case 'usage':
        this.lastUsage = frozenCopy(chunk.usage)
        return
      case 'finish':
        this.reason = frozenCopy(chunk.reason)
        this.cached = undefined
        return
      default:
        assertNever(chunk, 'BlockAssembler.push')
    }
  }

  /**
   * The blocks so far, in first-seen index order, deep-frozen. Open blocks appear with what their
   * deltas carried; an open block of a type deltas cannot build (an unknown kind, `tool-result`)
   * is omitted until its `block-end`. After a `max-tokens` finish, tool calls are omitted: a
   * truncated call must not run. Calling it again without new chunks returns the same array.
   */
  blocks(): readonly ContentBlock[] {
    if (this.cached !== undefined) return this.cached
    const dropToolCalls = this.reason?.kind === 'max-tokens'
    const out: ContentBlock[] = []
    for (const slot of this.order) {
      const block = slot.final ?? this.build(slot)
      if (block === undefined || (dropToolCalls && block.type === 'tool-call')) continue
      out.push(block)
    }
    // Every block is frozen and the assembler's own (a `frozenCopy` of `block-end`'s, or built here).
    this.cached = markDetached(Object.freeze(out))
    return this.cached
  }

  /**
   * What to keep when the stream is cancelled: the `text` and `reasoning` blocks with non-empty
   * text, in order. Tool calls (complete or not) and other kinds are left out.
   */
  interruptedBlocks(): readonly ContentBlock[] {
    return markDetached(
      Object.freeze(
        this.blocks().filter(
          (block) => (block.type === 'text' || block.type === 'reasoning') && block.text !== '',
        ),
      ),
    )
  }

  /** The `finish` reason pushed, or `{kind: 'stop'}` when none arrived. */
  finishReason(): FinishReason {
    return this.reason ?? STOP
  }

  /** The last `usage` pushed before `finish`, or `undefined`. */
  usage(): Usage | undefined {
    return this.lastUsage
  }

  private open(index: number, blockType: Slot['blockType']): Slot {
    const slot: Slot = {
      index,
      blockType,
      closed: false,
      final: undefined,
      text: '',
      id: undefined,
      name: undefined,
    }
    this.slots.set(index, slot)
    this.order.push(slot)
    this.cached = undefined
    return slot
  }

  /**
   * A completed tool call that carries no id (absent or `""`) takes its deltas' id, else
   * `<missingCallIdPrefix><index>`, as an open one does; any other block is returned as is.
   */
  private withCallId(slot: Slot, block: ContentBlock): ContentBlock {
    if (block.type !== 'tool-call') return block
    const given = block.id as string | undefined
    if (given !== undefined && given !== '') return block
    return { ...block, id: slot.id ?? CallId(`${this.callIdPrefix}${slot.index}`) }
  }

  private build(slot: Slot): ContentBlock | undefined {
    switch (slot.blockType) {
      case 'text':
        return Object.freeze({ type: 'text', text: slot.text })
      case 'reasoning':
        return Object.freeze({ type: 'reasoning', text: slot.text })
      case 'tool-call':
        return Object.freeze({
          type: 'tool-call',
          id: slot.id ?? CallId(`${this.callIdPrefix}${slot.index}`),
          name: slot.name ?? '',
          arguments: slot.text,
        })
      default:
        // Open union: kinds that deltas cannot build wait for their authoritative `block-end`.
        return undefined
    }
  }
}
