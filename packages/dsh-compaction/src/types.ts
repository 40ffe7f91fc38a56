/**
 * Types of dsh-compaction: the event payloads, the knobs, the outcomes and the token accounting
 * faces. Types only; runtime code lives beside each concept.
 */
import type { LlmAdapter } from 'dsh-llm'
import type { CompactionStrategy } from 'dsh-session'

export type {
  CompactionEndData,
  CompactionOutcomeKind,
  CompactionStartData,
  CompactionStrategy,
  CompactionTrigger,
} from 'dsh-session'

/** Counts tokens of a text. Defaults to `ceil(length / 4)`. */
export type CountTokens = (text: string) => number

/** Where the summarizing call goes: default the agent's own provider and model, through `ctx.llm`. */
export interface SummarizerOptions {
  /** Calls this adapter directly instead of `ctx.llm.stream` (no `llm/stream` listeners run then). */
  readonly adapter?: LlmAdapter
  /** Overrides the provider of the summarizing request (routed through `ctx.llm`). */
  readonly provider?: string
  /** Overrides the model of the summarizing request. */
  readonly model?: string
  /** The instruction appended after the history; default `DEFAULT_SUMMARY_INSTRUCTION`. */
  readonly instruction?: string
  /** `maxTokens` of the summarizing request; default 8% of the window, at most 8192. */
  readonly maxTokens?: number
}

/** Knobs of the cheap first stage: long tool results pruned to head + tail. `false` turns it off. */
export interface PruneOptions {
  /** A tool result is pruned when its estimated tokens exceed this; default 1024. */
  readonly aboveTokens?: number
  /** Characters kept from the start of the result's text; default 1200. */
  readonly headChars?: number
  /** Characters kept from the end of the result's text; default 800. */
  readonly tailChars?: number
}

/** Configuration of the `Compaction` plugin (every member optional). */
export interface CompactionConfig {
  /** Context windows by model id, merged over `KNOWN_CONTEXT_WINDOWS` (exact id, then longest prefix). */
  readonly contextWindows?: Readonly<Record<string, number>>
  /** The window for a model the table does not know; default 128000. */
  readonly defaultContextWindow?: number
  /** Compact before a step whose request would fill this share of the window; default 0.8. */
  readonly threshold?: number
  /** Pruning alone is enough when it brings the request to this share of the window; default 0.5. */
  readonly targetRatio?: number
  /** Tokens of recent history kept verbatim after a summary; default a quarter of the window, at most 20000. */
  readonly keepTokens?: number
  readonly prune?: PruneOptions | false
  readonly summarizer?: SummarizerOptions
  /** A tokenizer for the estimates (e.g. `gpt-tokenizer`'s `encode(text).length`). */
  readonly countTokens?: CountTokens
  /** Compact automatically before steps (`threshold`) and on overflow; default true. */
  readonly auto?: boolean
}

/** The pressure on the next request's context window. */
export interface ContextPressure {
  /** Estimated tokens of the next request. */
  readonly tokens: number
  /** The model's context window. */
  readonly window: number
  /** `tokens / window` (0.72 = "context 72% full"). */
  readonly ratio: number
  /**
   * True when the estimate starts from the provider-reported usage of the last request (input +
   * cache reads + cache writes) and only estimates what the surface gained since; false when
   * everything is estimated (no usage yet, or the header or the surface was replaced since).
   */
  readonly anchored: boolean
}

/** Closed: what a call to compact did. */
export type CompactionResult =
  | {
      readonly kind: 'completed'
      readonly id: string
      readonly strategy: CompactionStrategy
      readonly tokensBefore: number
      readonly tokensAfter: number
    }
  | { readonly kind: 'rejected' | 'failed'; readonly id: string; readonly reason: string }
  | { readonly kind: 'skipped'; readonly reason: string }
