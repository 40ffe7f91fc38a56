/**
 * What the loop accepts from a model stream before a chunk is logged and assembled: well-formed
 * text (a lone surrogate becomes U+FFFD; a pair split across two deltas is joined), tool-call ids
 * unique in the session, and usage and failure numbers the log can hold. Chunks that need nothing
 * pass through untouched, so the common case costs a type switch and one precompiled surrogate scan
 * per string, with no allocation (see the stream-guard Agent Note for the measured cost).
 */
import {
  CallId,
  type ContentBlock,
  type FinishReason,
  isHighSurrogate,
  isWellFormed,
  type LlmFailure,
  REPLACEMENT_CHARACTER,
  type StreamChunk,
  type Usage,
  wellFormed,
  wellFormedJson,
} from 'dsh-llm'

/** What the guard reports instead of failing: a number it clamped or dropped. */
export type GuardWarning = (problem: string) => void

/** The id a tool call gets when its id is taken: `<id>~<n>`, the smallest n >= 2 that is free. */
export function renamedCallId(id: string, n: number): string {
  return `${id}~${n}`
}

/** The tool-call ids a session's history already uses, and where renaming each one got to. */
export interface TakenCallIds {
  has(id: string): boolean
  /** Per original id: the suffix its next rename starts probing at. */
  readonly nextSuffix: Map<string, number>
}

interface CallSlot {
  readonly original: string
  readonly id: CallId
}

/**
 * One stream's guard. `accept(chunk)` returns `undefined` when `chunk` may be logged as it is, or
 * the chunks to log instead (possibly none, possibly two: a held surrogate flushed as U+FFFD
 * before a block ends). Feed every chunk of the stream through it, in order.
 */
export class StreamGuard {
  /** Per block index: a high surrogate that ended the last delta, waiting for its low half. */
  private held: Map<number, string> | undefined
  /** Per block index: the id its tool call is logged under (made on the first tool call). */
  private calls: Map<number, CallSlot> | undefined
  /** Ids given to tool calls of this stream. */
  private used: Set<string> | undefined

  /**
   * @param taken — the tool-call ids already used in the session (answered in an earlier step, or
   *   otherwise present in the history the next request carries).
   * @param warn — receives a description of each usage number clamped or dropped.
   */
  constructor(
    private readonly taken: TakenCallIds,
    private readonly warn: GuardWarning,
  ) {}

  /** See the class comment. */
  accept(chunk: StreamChunk): readonly StreamChunk[] | undefined {
    // The common case, kept small so it inlines into the read loop: a well-formed text delta.
    if (
      this.held === undefined &&
      (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') &&
      !hasSurrogate(chunk.text)
    ) {
      return undefined
    }
    return this.check(chunk)
  }

  private check(chunk: StreamChunk): readonly StreamChunk[] | undefined {
    switch (chunk.type) {
      case 'text-delta':
      case 'reasoning-delta':
        if (this.held === undefined && isWellFormed(chunk.text)) return undefined
        return [{ ...chunk, text: this.joined(chunk.index, chunk.text) }]
      case 'tool-call-delta':
        return this.toolCallDelta(chunk)
      case 'block-end':
        return this.blockEnd(chunk)
      case 'usage': {
        if (validUsage(chunk.usage)) return undefined
        const usage = this.usage(chunk.usage)
        return usage === chunk.usage ? undefined : [{ type: 'usage', usage }]
      }
      case 'finish': {
        if (this.held === undefined && plainFinish(chunk.reason)) return undefined
        const flushed = this.flushAll()
        const reason = finiteFailure(wellFormedJson(chunk.reason))
        if (flushed === undefined && reason === chunk.reason) return undefined
        return [...(flushed ?? []), reason === chunk.reason ? chunk : { type: 'finish', reason }]
      }
      default:
        return undefined
    }
  }

  /** `text` of a delta at `index`, after any held surrogate, holding back a trailing high one. */
  private joined(index: number, text: string): string {
    const before = this.held?.get(index)
    let whole = before === undefined ? text : before + text
    if (before !== undefined) this.held?.delete(index)
    if (whole.length > 0 && isHighSurrogate(whole.charCodeAt(whole.length - 1))) {
      this.held ??= new Map()
      this.held.set(index, whole.slice(-1))
      whole = whole.slice(0, -1)
    }
    if (this.held?.size === 0) this.held = undefined
    return wellFormed(whole)
  }

  private toolCallDelta(
    chunk: StreamChunk & { type: 'tool-call-delta' },
  ): readonly StreamChunk[] | undefined {
    const slot = this.calls?.get(chunk.index)
    let id = chunk.id
    if (slot === undefined) {
      id = this.claim(chunk.index, id === undefined || id === '' ? `dsh-call-${chunk.index}` : id)
    } else if (id !== undefined && (id === slot.original || id === slot.id)) {
      id = slot.id
    }
    const clean =
      id === chunk.id &&
      this.held === undefined &&
      quickWellFormed(chunk.argumentsDelta) &&
      (chunk.name === undefined || quickWellFormed(chunk.name))
    if (clean) return undefined
    const fixed: { -readonly [K in keyof typeof chunk]: (typeof chunk)[K] } = {
      ...chunk,
      argumentsDelta: this.joined(chunk.index, chunk.argumentsDelta),
    }
    if (id !== undefined) fixed.id = CallId(wellFormed(id))
    if (chunk.name !== undefined) fixed.name = wellFormed(chunk.name)
    return [fixed]
  }

  private blockEnd(chunk: StreamChunk & { type: 'block-end' }): readonly StreamChunk[] | undefined {
    const { block: given } = chunk
    if (
      this.held === undefined &&
      (given.type === 'text' || given.type === 'reasoning') &&
      quickWellFormed(given.text)
    ) {
      return undefined
    }
    if (this.held === undefined && given.type === 'tool-call') {
      // A tool call under the id its deltas were logged under, with no surrogate anywhere: as is.
      const slot = this.calls?.get(chunk.index)
      if (slot !== undefined && given.id === slot.id && jsonWithoutSurrogates(given)) return undefined
    }
    const flushed = this.flush(chunk.index)
    let block: ContentBlock = wellFormedJson(chunk.block)
    if (block.type === 'tool-call') {
      const slot = this.calls?.get(chunk.index)
      // A provider may leave the id off the completed call (absent or ""): the id its deltas were
      // logged under stands, else `dsh-call-<index>`, as for deltas without one.
      const given = block.id as string | undefined
      const missing = given === undefined || given === ''
      const id =
        slot !== undefined && (missing || given === slot.original || given === slot.id)
          ? slot.id
          : this.claim(chunk.index, missing ? `dsh-call-${chunk.index}` : given)
      if (id !== block.id) block = { ...block, id }
    }
    if (flushed === undefined && block === chunk.block) return undefined
    const end: StreamChunk = block === chunk.block ? chunk : { ...chunk, block }
    return flushed === undefined ? [end] : [flushed, end]
  }

  /** Gives the tool call at `index` the id `wanted`, or `wanted~n` when that is taken. */
  private claim(index: number, wanted: string): CallId {
    const original = wellFormed(wanted)
    if (this.used === undefined) this.used = new Set()
    const used = this.used
    let id = original
    if (used.has(id) || this.taken.has(id)) {
      // Start where the last rename of this id stopped: a provider that reuses one id every step
      // costs one probe per step, not one per earlier step.
      let n = this.taken.nextSuffix.get(original) ?? 2
      id = renamedCallId(original, n)
      while (used.has(id) || this.taken.has(id)) {
        n++
        id = renamedCallId(original, n)
      }
      this.taken.nextSuffix.set(original, n + 1)
    }
    const callId = CallId(id)
    used.add(id)
    this.calls ??= new Map()
    this.calls.set(index, { original: wanted, id: callId })
    return callId
  }

  /** A held surrogate at `index` as a U+FFFD delta of its block's kind, if any. */
  private flush(index: number): StreamChunk | undefined {
    const held = this.held?.get(index)
    if (held === undefined) return undefined
    this.held?.delete(index)
    if (this.held?.size === 0) this.held = undefined
    return this.calls?.has(index) === true
      ? { type: 'tool-call-delta', index, argumentsDelta: REPLACEMENT_CHARACTER }
      : { type: 'text-delta', index, text: REPLACEMENT_CHARACTER }
  }

  private flushAll(): StreamChunk[] | undefined {
    if (this.held === undefined) return undefined
    const out: StreamChunk[] = []
    for (const index of [...this.held.keys()]) {
      const chunk = this.flush(index)
      if (chunk !== undefined) out.push(chunk)
    }
    return out
  }

  /** `usage` when every number is a finite count >= 0; else a repaired copy (and a warning). */
  private usage(usage: unknown): Usage {
    if (validUsage(usage)) return usage
    const source = (usage !== null && typeof usage === 'object' ? usage : {}) as Record<string, unknown>
    const problems: string[] = []
    if (source !== usage) problems.push(`usage ${describe(usage)} replaced by zero counts`)
    const out: Record<string, number> = {}
    for (const [field, required] of USAGE_FIELDS) {
      const value = source[field]
      if (value === undefined && !required) continue
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
        out[field] = value
      } else if (typeof value === 'number' && value < 0 && Number.isFinite(value)) {
        out[field] = 0
        problems.push(`${field} ${value} clamped to 0`)
      } else if (required) {
        out[field] = 0
        if (source === usage) problems.push(`${field} ${describe(value)} set to 0`)
      } else {
        problems.push(`${field} ${describe(value)} dropped`)
      }
    }
    if (problems.length === 0) return usage as Usage
    this.warn(`the model reported invalid usage (${problems.join('; ')})`)
    return out as unknown as Usage
  }
}

const USAGE_FIELDS: readonly (readonly [keyof Usage, boolean])[] = [
  ['inputTokens', true],
  ['outputTokens', true],
  ['cacheReadTokens', false],
  ['cacheWriteTokens', false],
  ['reasoningTokens', false],
]

/**
 * `reason` without a failure's `status` or `retryAfterMs` when either is not a finite number >= 0
 * (an `Infinity` delay would never end, and the log holds JSON only): the retry policy then uses its
 * own backoff. The same object when nothing is wrong.
 */
function finiteFailure(reason: FinishReason): FinishReason {
  const failure = (reason as { failure?: unknown }).failure
  if (failure === null || typeof failure !== 'object') return reason
  const { status, retryAfterMs, ...rest } = failure as LlmFailure
  const badStatus = status !== undefined && !isCount(status)
  const badDelay = retryAfterMs !== undefined && !isCount(retryAfterMs)
  if (!badStatus && !badDelay) return reason
  const kept: { -readonly [K in keyof LlmFailure]: LlmFailure[K] } = { ...rest }
  if (!badStatus && status !== undefined) kept.status = status
  if (!badDelay && retryAfterMs !== undefined) kept.retryAfterMs = retryAfterMs
  return { ...reason, failure: kept } as FinishReason
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

/** The common case, without allocating: every count present where required, finite and >= 0. */
function validUsage(usage: unknown): usage is Usage {
  if (usage === null || typeof usage !== 'object') return false
  const source = usage as Record<string, unknown>
  return (
    isCount(source.inputTokens) &&
    isCount(source.outputTokens) &&
    optionalCount(source.cacheReadTokens) &&
    optionalCount(source.cacheWriteTokens) &&
    optionalCount(source.reasoningTokens)
  )
}

function optionalCount(value: unknown): boolean {
  return value === undefined || isCount(value)
}

/** Any UTF-16 surrogate code unit, paired or not; one precompiled scan, no allocation. */
const SURROGATE = /[\uD800-\uDFFF]/

/**
 * True when `text` holds a surrogate code unit. The guard's quick checks use this stricter test
 * (a well-formed pair also counts) and leave anything it flags to the full repair path, which
 * returns the chunk untouched when the pair turns out to be well-formed.
 */
function hasSurrogate(text: string): boolean {
  return SURROGATE.test(text)
}

/** `isWellFormed(text)`, answered by the cheaper surrogate scan when `text` has none. */
function quickWellFormed(text: string): boolean {
  return !SURROGATE.test(text) || isWellFormed(text)
}

/**
 * True when the JSON-shaped `value` has no surrogate in any string or key, so `wellFormedJson`
 * would return it unchanged. Walks without allocating; false for anything it is unsure of.
 */
function jsonWithoutSurrogates(value: unknown): boolean {
  if (typeof value === 'string') return !hasSurrogate(value)
  if (value === null || typeof value !== 'object') return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!jsonWithoutSurrogates(value[i])) return false
    return true
  }
  const source = value as Record<string, unknown>
  for (const key in source) {
    if (hasSurrogate(key) || !jsonWithoutSurrogates(source[key])) return false
  }
  return true
}

/** A finish reason the guard logs as is: no surrogate anywhere and no failure numbers to check. */
function plainFinish(reason: FinishReason): boolean {
  return (reason as { failure?: unknown }).failure === undefined && jsonWithoutSurrogates(reason)
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing'
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value)
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value
}
