/**
 * Hand-written acceptance checks for the shapes every hot event carries: content blocks, messages,
 * stream chunks, usage, finish reasons. Each returns `true` only for a value its zod schema in
 * `payload-schemas.ts` accepts; `false` means "ask zod", which then either accepts (an unknown open
 * kind, an unusual but valid value) or produces the error message. Zod stays the single source of
 * every message and path; these checks only decide the common case without it.
 */
import { isRecord } from 'dsh-llm'

/** `z.string()`. */
export function isString(value: unknown): value is string {
  return typeof value === 'string'
}

/** `z.string().min(1)`. */
export function isNonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0
}

/** `z.number()` (finite). */
export function isNumber(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value)
}

/** `z.number().int().nonnegative()`. */
export function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/** `z.number().int().positive()`. */
export function isOrdinal(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}

function isNonNegative(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

/** `check.optional()`: absent (undefined) or accepted by `check`. */
export function optional(value: unknown, check: (value: unknown) => boolean): boolean {
  return value === undefined || check(value)
}

/** A known content block (`text`, `reasoning`, `tool-call`, `tool-result`); unknown types → zod. */
export function isContentBlock(value: unknown): boolean {
  // issue 32: a block with replay metadata (`providerData`) is left to zod, which checks its JSON.
  if (!isRecord(value) || value.providerData !== undefined) return false
  switch (value.type) {
    case 'text':
    case 'reasoning':
      return typeof value.text === 'string'
    case 'tool-call':
      return isNonEmpty(value.id) && isString(value.name) && isString(value.arguments)
    case 'tool-result':
      return isToolResultBlock(value)
    default:
      return false
  }
}

/** The `tool-result` block schema itself (not through the open union). */
export function isToolResultBlock(value: unknown): boolean {
  return (
    isRecord(value) &&
    value.type === 'tool-result' &&
    isNonEmpty(value.toolCallId) &&
    isContent(value.content) &&
    optional(value.isError, isBoolean)
  )
}

/** An array of known content blocks. */
export function isContent(value: unknown): boolean {
  if (!Array.isArray(value)) return false
  for (let i = 0; i < value.length; i++) if (!isContentBlock(value[i])) return false
  return true
}

/** `z.boolean()`. */
export function isBoolean(value: unknown): boolean {
  return typeof value === 'boolean'
}

/** The `model` message source. */
export function isModelSource(value: unknown): boolean {
  return isRecord(value) && value.kind === 'model' && isString(value.provider) && isString(value.model)
}

/** The `tool` message source. */
export function isToolSource(value: unknown): boolean {
  return isRecord(value) && value.kind === 'tool' && isNonEmpty(value.callId)
}

/** A known message source (`user`, `plugin`, `model`, `tool`); unknown kinds → zod. */
function isMessageSource(value: unknown): boolean {
  if (!isRecord(value)) return false
  switch (value.kind) {
    case 'user':
      return true
    case 'plugin':
      return isString(value.plugin)
    case 'model':
      return isModelSource(value)
    case 'tool':
      return isToolSource(value)
    default:
      return false
  }
}

/**
 * `userMessageSchema`, the common case: `true` only for a value the schema accepts (a user message of
 * known block and source kinds); `false` means "ask the schema", which decides and names the defect.
 */
export function isUserMessage(value: unknown): boolean {
  return (
    isRecord(value) &&
    isNonEmpty(value.id) &&
    value.role === 'user' &&
    isContent(value.content) &&
    isMessageSource(value.source)
  )
}

/** `assistantMessageSchema`. */
export function isAssistantMessage(value: unknown): boolean {
  return (
    isRecord(value) &&
    isNonEmpty(value.id) &&
    value.role === 'assistant' &&
    isContent(value.content) &&
    isModelSource(value.source)
  )
}

/** `toolResultMessageSchema`: exactly one `tool-result` block, source `tool`. */
export function isToolResultMessage(value: unknown): boolean {
  if (!isRecord(value) || !isNonEmpty(value.id) || value.role !== 'user') return false
  const content = value.content
  return (
    Array.isArray(content) &&
    content.length === 1 &&
    isToolResultBlock(content[0]) &&
    isToolSource(value.source)
  )
}

/** `usageSchema`. */
export function isUsage(value: unknown): boolean {
  return (
    isRecord(value) &&
    isNonNegative(value.inputTokens) &&
    isNonNegative(value.outputTokens) &&
    optional(value.cacheReadTokens, isNonNegative) &&
    optional(value.cacheWriteTokens, isNonNegative) &&
    optional(value.reasoningTokens, isNonNegative)
  )
}

/** The failure record of `aborted`/`error` finish and turn-end reasons. */
export function isFailure(value: unknown): boolean {
  return (
    isRecord(value) &&
    isString(value.message) &&
    isString(value.code) &&
    optional(value.status, isNumber) &&
    optional(value.retryAfterMs, isNumber) &&
    optional(value.requestId, isString) &&
    optional(value.providerCode, isString)
  )
}

/** A known finish reason; unknown kinds → zod. */
export function isFinishReason(value: unknown): boolean {
  if (!isRecord(value)) return false
  switch (value.kind) {
    case 'stop':
    case 'tool-calls':
    case 'max-tokens':
      return true
    case 'aborted':
    case 'error':
      return isFailure(value.failure)
    default:
      return false
  }
}

/** `streamChunkSchema` (closed: an unknown chunk type is for zod to reject). */
export function isStreamChunk(value: unknown): boolean {
  if (!isRecord(value)) return false
  switch (value.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return isCount(value.index) && isString(value.text)
    case 'tool-call-delta':
      return (
        isCount(value.index) &&
        optional(value.id, isNonEmpty) &&
        optional(value.name, isString) &&
        isString(value.argumentsDelta)
      )
    case 'block-start':
      return isCount(value.index) && isString(value.blockType)
    case 'block-end':
      return isCount(value.index) && isContentBlock(value.block)
    case 'usage':
      return isUsage(value.usage)
    case 'finish':
      return isFinishReason(value.reason)
    default:
      return false
  }
}
