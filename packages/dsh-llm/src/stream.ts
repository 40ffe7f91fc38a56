import type { CallId } from './ids.ts'
import type { ContentBlock, ContentBlockType, FinishReason } from './vocabulary.ts'

/**
 * Token counts for one model call. The counts are disjoint: `inputTokens` excludes
 * `cacheReadTokens` and `cacheWriteTokens`; `outputTokens` includes `reasoningTokens`.
 */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
  readonly reasoningTokens?: number
}

/**
 * Closed: one unit of a model stream. Blocks are addressed by `index`; `block-end` carries the
 * completed block, which is authoritative over the deltas. A well-formed stream ends with `finish`.
 */
export type StreamChunk =
  | { readonly type: 'block-start'; readonly index: number; readonly blockType: ContentBlockType }
  | { readonly type: 'text-delta'; readonly index: number; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly index: number; readonly text: string }
  | {
      readonly type: 'tool-call-delta'
      readonly index: number
      readonly id?: CallId
      readonly name?: string
      readonly argumentsDelta: string
    }
  | { readonly type: 'block-end'; readonly index: number; readonly block: ContentBlock }
  | { readonly type: 'usage'; readonly usage: Usage }
  | { readonly type: 'finish'; readonly reason: FinishReason }

/** The `type` tag of a stream chunk. */
export type StreamChunkType = StreamChunk['type']
