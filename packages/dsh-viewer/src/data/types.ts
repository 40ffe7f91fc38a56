/** The view model the page renders: computed in Node from a session log, embedded in the page as JSON. */
import type { Message, Usage } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'

/**
 * Where one message of a request came from. `index` is the position in `ViewData.events` of the event
 * that carries it (a contiguous log has `index === seq`): a `user/message`, `assistant/message` or
 * `tool/result`, or the `request/header` whose `messagePrefix[prefixIndex]` it is. An assistant
 * message also names the `assistant/chunk` events it was streamed in. `inline` holds a message no
 * event carries verbatim (a compaction `replace`); it is rendered from here instead.
 */
export type MessageSource =
  | {
      readonly kind: 'event'
      readonly index: number
      readonly prefixIndex?: number
      readonly chunks?: readonly [first: number, last: number]
    }
  | { readonly kind: 'inline'; readonly message: Message }

/** What changed from the previous request to this one. */
export interface RequestDiff {
  /** The previous request's number, or `undefined` for the first request. */
  readonly previous?: number
  /** Leading messages equal (by JSON, ids aside) in both: the part a prefix cache can reuse. */
  readonly kept: number
  /** Messages of the previous request past `kept` (changed or dropped): a prefix-cache break when > 0. */
  readonly removed: number
  /** Messages of this request past `kept`. */
  readonly added: number
  readonly systemChanged: boolean
  readonly toolsChanged: boolean
  /** Call config fields whose value changed (`model`, `temperature`, ...). */
  readonly configChanged: readonly string[]
  /** True when anything before the previous request's end changed: system, tools or a kept message. */
  readonly cacheBreak: boolean
}

/**
 * One model request as the log implies it. To keep the page linear in the log's size, a request
 * stores only the sources of the messages past `shared` (the rest are the previous request's);
 * `requestMessages` resolves the whole list. Config, system prompt and tools are the `header`
 * event's.
 */
export interface RequestView {
  /** 0-based, in log order. */
  readonly number: number
  readonly turn: number
  readonly step: number
  /** Index of the request's first `assistant/chunk` (it derives from the events before it). */
  readonly start: number
  /** Index of the `request/header` it was composed under. */
  readonly header: number
  /**
   * How many leading messages are the previous request's very messages (ids included), whose
   * sources it shares; at most `diff.kept`.
   */
  readonly shared: number
  /** Sources of `messages[shared ...]`. */
  readonly sources: readonly MessageSource[]
  readonly messageCount: number
  readonly diff: RequestDiff
  /** Indices of the call's first and last `assistant/chunk`, and how many it had. */
  readonly chunks: readonly [first: number, last: number, count: number]
  readonly finish?: string
  readonly usage?: Usage
  readonly startTime: number
  readonly endTime: number
}

/** One tool call: `tool/call` to `tool/result`. */
export interface ToolView {
  readonly callId: string
  readonly name: string
  readonly arguments: string
  /** Index of `tool/call`, absent when the call never started. */
  readonly call?: number
  /** Index of `tool/result`, absent while unanswered. */
  readonly result?: number
  readonly resultText?: string
  readonly isError: boolean
  readonly errorCode?: string
  readonly startTime?: number
  readonly endTime?: number
}

/** One step with what happened in it. */
export interface StepView {
  readonly turn: number
  readonly step: number
  readonly start: number
  readonly end?: number
  readonly startTime: number
  readonly endTime?: number
  readonly usage: Usage
  /** Numbers of the requests made in this step. */
  readonly requests: readonly number[]
  readonly tools: readonly ToolView[]
}

/** One turn. */
export interface TurnView {
  readonly turn: number
  readonly start: number
  readonly end?: number
  readonly startTime: number
  readonly endTime?: number
  readonly trigger: string
  readonly endReason?: string
  readonly usage: Usage
  readonly steps: readonly StepView[]
}

/** One compaction (dsh-compaction): what it replaced, its summary, and the tokens before and after. */
export interface CompactionView {
  readonly id: string
  /** Index of its `compaction/start` event. */
  readonly start: number
  /** Index of its `compaction/end` event (absent while it is open). */
  readonly end?: number
  readonly trigger: string
  readonly strategy: string
  /** The estimated tokens of the next request before, and after when it completed. */
  readonly tokensBefore: number
  readonly tokensAfter?: number
  /** How many surface replaces it announced, and the indices of those written. */
  readonly announced: number
  readonly replaces: readonly number[]
  /** How many surface messages the replaces stood in for. */
  readonly replaced: number
  /** The summary text (summarize only). */
  readonly summary?: string
  readonly outcome?: string
  readonly reason?: string
  readonly repaired?: boolean
}

/** What an event is marked with in the event list. */
export type EventMark = 'violation' | 'repair' | 'inbox' | 'injected'

/** An invariant violation placed at its event (`index`), or about the whole log. */
export interface ViolationView {
  readonly check: string
  readonly message: string
  readonly index?: number
}

/** Everything the page shows. */
export interface ViewData {
  readonly file: string
  readonly sessionId?: string
  readonly events: readonly SessionEvent[]
  readonly turns: readonly TurnView[]
  readonly requests: readonly RequestView[]
  readonly violations: readonly ViolationView[]
  /** Indices of events that are repair closers (appended when an interrupted turn was closed). */
  readonly repairs: readonly number[]
  /** Indices of inbox events (`agent/inbox/spliced`: sends, claims, removals). */
  readonly inbox: readonly number[]
  /** Indices of `user/message` events that did not come through the inbox (injections, contexts). */
  readonly injected: readonly number[]
  /** The compactions of the log (dsh-compaction), in order. */
  readonly compactions: readonly CompactionView[]
  /** Set when the requests could not be reconstructed (the log is too broken); the rest still shows. */
  readonly reconstructionError?: string
  /** The file's final line, when it was torn and skipped (as a storage load would cut it off). */
  readonly tornLine?: number
}
