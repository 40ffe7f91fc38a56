/**
 * Fast acceptance checks for the envelope and the core payloads appended and loaded most often.
 * Contract (pinned by a property test against the zod schemas): a check returns `true` only when
 * the zod schema accepts the value; on `false` the caller asks zod, which decides and names the
 * defect. So validation rejects exactly what zod rejects, and zod's slow paths (the open unions'
 * `superRefine`) run only for unusual values.
 */
import { isRecord, REASONING_EFFORTS } from 'dsh-llm'
import {
  isAssistantMessage,
  isCount,
  isFailure,
  isNonEmpty,
  isNumber,
  isOrdinal,
  isStreamChunk,
  isString,
  isToolResultMessage,
  isUsage,
  isUserMessage,
  optional,
} from './fast-blocks.ts'
import { isValidatedUserMessage } from './validated-messages.ts'

/** A fast acceptance check: `true` means the zod schema accepts the value; `false` means "ask zod". */
export type FastCheck = (value: unknown) => boolean

function isTurnStep(value: Readonly<Record<string, unknown>>): boolean {
  return isOrdinal(value.turn) && isOrdinal(value.step)
}

function isTrigger(value: unknown): boolean {
  if (!isRecord(value)) return false
  switch (value.kind) {
    case 'send':
      return value.target === 'next-turn' || value.target === 'next-step'
    case 'queued':
      return true
    default:
      return false
  }
}

function isTurnEndReason(value: unknown): boolean {
  if (!isRecord(value)) return false
  switch (value.kind) {
    case 'completed':
    case 'max-tokens':
    case 'blocked':
    case 'interrupted':
      return true
    case 'aborted':
      return isString(value.cause)
    case 'error':
      return isFailure(value.failure)
    default:
      return false
  }
}

function isToolError(value: unknown): boolean {
  return isRecord(value) && isString(value.code) && isString(value.message)
}

/** `z.array(item)`: an array every element of which `check` accepts. */
function isArrayOf(value: unknown, check: (item: unknown) => boolean): boolean {
  if (!Array.isArray(value)) return false
  for (let i = 0; i < value.length; i++) if (!check(value[i])) return false
  return true
}

/**
 * `z.record(z.string(), z.unknown())`, conservatively: an object of `Object.prototype` without an
 * own `constructor` or symbol key (zod's plain-object test and key check then always pass).
 */
function isPlainRecord(value: unknown): boolean {
  return (
    isRecord(value) &&
    Object.getPrototypeOf(value) === Object.prototype &&
    !Object.hasOwn(value, 'constructor') &&
    Object.getOwnPropertySymbols(value).length === 0
  )
}

function isToolSpec(value: unknown): boolean {
  return (
    isRecord(value) &&
    isNonEmpty(value.name) &&
    isString(value.description) &&
    isPlainRecord(value.parameters)
  )
}

/** `messageSchema`: a user or an assistant message. */
function isMessage(value: unknown): boolean {
  return isUserMessage(value) || isAssistantMessage(value)
}

function isEffort(value: unknown): boolean {
  return (REASONING_EFFORTS as readonly unknown[]).includes(value)
}

function isCallConfig(value: unknown): boolean {
  return (
    isRecord(value) &&
    isNonEmpty(value.provider) &&
    isString(value.model) &&
    optional(value.temperature, isNumber) &&
    optional(value.maxTokens, isOrdinal) &&
    optional(value.reasoningEffort, isEffort) &&
    optional(value.stop, (x) => isArrayOf(x, isString)) &&
    // issue 32: a cache policy is left to zod.
    value.cachePolicy === undefined
  )
}

/** `requestHeaderSchema`. */
function isRequestHeader(value: unknown): boolean {
  return (
    isRecord(value) &&
    isCallConfig(value.config) &&
    optional(value.system, isString) &&
    optional(value.tools, (x) => isArrayOf(x, isToolSpec)) &&
    optional(value.messagePrefix, (x) => isArrayOf(x, isMessage))
  )
}

function isHeaderReason(value: unknown): boolean {
  return value === 'initial' || value === 'resume' || value === 'change'
}

/** `inboxSpliceSchema`. */
/** `userMessageSchema`: a message `validateUserMessage` returned (checked once, frozen), or one that passes. */
function isCheckedUserMessage(value: unknown): boolean {
  return isValidatedUserMessage(value) || isUserMessage(value)
}

function isInboxSplice(value: unknown): boolean {
  return (
    isRecord(value) &&
    (value.target === 'next-turn' || value.target === 'next-step') &&
    isNumber(value.start) &&
    optional(value.removedCount, isNumber) &&
    isArrayOf(value.inserted, isCheckedUserMessage) &&
    optional(value.outcome, (x) => x === 'canceled')
  )
}

/**
 * Fast checks of core payloads, by event type (the catalog in `schemas.ts` attaches each to its
 * type). Types without one always go to zod.
 */
export const fastPayloadChecks = {
  'assistant/chunk': (v) => isRecord(v) && isTurnStep(v) && isStreamChunk(v.chunk),
  'step/start': (v) => isRecord(v) && isTurnStep(v),
  'step/end': (v) => isRecord(v) && isTurnStep(v),
  'tool/call': (v) =>
    isRecord(v) && isTurnStep(v) && isNonEmpty(v.callId) && isString(v.name) && isString(v.arguments),
  'assistant/message': (v) =>
    isRecord(v) &&
    isTurnStep(v) &&
    isAssistantMessage(v.message) &&
    optional(v.usage, isUsage) &&
    optional(v.interrupted, (x) => typeof x === 'boolean'),
  'tool/result': (v) =>
    isRecord(v) && isTurnStep(v) && isToolResultMessage(v.message) && optional(v.error, isToolError),
  'user/message': isCheckedUserMessage,
  'turn/start': (v) => isRecord(v) && isOrdinal(v.turn) && isTrigger(v.trigger),
  'turn/end': (v) => isRecord(v) && isOrdinal(v.turn) && isTurnEndReason(v.reason),
  'request/header': (v) => isRecord(v) && isRequestHeader(v.header) && isHeaderReason(v.reason),
  'agent/inbox/spliced': isInboxSplice,
} as const satisfies Record<string, FastCheck>

/** `surfaceMetaSchema`. */
export function isSurfaceMeta(value: unknown): boolean {
  if (!isRecord(value)) return false
  if (value.op === 'append') return true
  if (value.op !== 'replace' || !isCount(value.start) || !isCount(value.end)) return false
  const seqs = value.sourceEventSeqs
  if (!Array.isArray(seqs)) return false
  for (let i = 0; i < seqs.length; i++) if (!isCount(seqs[i])) return false
  return true
}

/** `envelopeSchema` (`data` is checked separately). */
export function isEnvelope(value: unknown): boolean {
  return (
    isRecord(value) &&
    isNonEmpty(value.type) &&
    isCount(value.seq) &&
    isNumber(value.time) &&
    optional(value.surface, isSurfaceMeta)
  )
}
