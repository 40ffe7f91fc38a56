/**
 * Zod schemas of the envelope and every core payload. Open vocabularies (content blocks, message
 * sources, finish and turn-end reasons, turn triggers) validate their known kinds and pass unknown
 * kinds through, so plugins that extend them by declaration merging still load.
 */
import { REASONING_EFFORTS } from 'dsh-llm'
import { z } from 'zod'

const count = z.number().int().nonnegative()
const ordinal = z.number().int().positive()
const nonEmpty = z.string().min(1)

/**
 * An open tagged union: `tag` must be a string; a known tag is checked against its schema (issues
 * keep their paths), an unknown tag passes through unchanged.
 */
function openUnion(tag: 'type' | 'kind', build: () => Readonly<Record<string, z.ZodType>>): z.ZodType {
  // Built on first use (the content-block table refers to itself) and then kept: building zod
  // schemas per parse would dominate the cost of every append.
  let table: Readonly<Record<string, z.ZodType>> | undefined
  const known = () => {
    table ??= build()
    return table
  }
  return z.looseObject({ [tag]: z.string() }).superRefine((value, ctx) => {
    const tagValue = value[tag]
    if (typeof tagValue !== 'string' || !Object.hasOwn(known(), tagValue)) return
    const schema = known()[tagValue]
    const result = schema?.safeParse(value)
    if (result === undefined || result.success) return
    for (const issue of result.error.issues) {
      ctx.addIssue({ code: 'custom', message: issue.message, path: [...issue.path] })
    }
  })
}

// --- issue 32: replay metadata (`providerData`) and the cache policy. Kept apart to re-apply. ---
/** A block's `providerData`: JSON objects keyed by provider. */
const providerDataSchema = z.record(z.string(), z.record(z.string(), z.json())).optional()
/** `LlmCallConfig.cachePolicy`. */
const cachePolicySchema = z
  .object({
    breakpoints: z.enum(['auto', 'none']),
    ttl: z.enum(['5m', '1h']).optional(),
    prefixMessages: count.optional(),
  })
  .optional()
// --- end issue 32 ---

const contentBlockSchemas: Readonly<Record<string, z.ZodType>> = {
  text: z.object({ type: z.literal('text'), text: z.string(), providerData: providerDataSchema }),
  reasoning: z.object({ type: z.literal('reasoning'), text: z.string(), providerData: providerDataSchema }),
  'tool-call': z.object({
    type: z.literal('tool-call'),
    id: nonEmpty,
    name: z.string(),
    arguments: z.string(),
    providerData: providerDataSchema,
  }),
  'tool-result': z.object({
    type: z.literal('tool-result'),
    toolCallId: nonEmpty,
    content: z.array(z.lazy(() => contentBlockSchema)),
    isError: z.boolean().optional(),
  }),
}

/** Open: a content block. Known `type`s are checked; unknown ones pass through. */
export const contentBlockSchema: z.ZodType = openUnion('type', () => contentBlockSchemas)

const modelSourceSchema = z.object({ kind: z.literal('model'), provider: z.string(), model: z.string() })
const toolSourceSchema = z.object({ kind: z.literal('tool'), callId: nonEmpty })

/** Open: where a message came from. */
export const messageSourceSchema: z.ZodType = openUnion('kind', () => ({
  user: z.object({ kind: z.literal('user') }),
  plugin: z.object({ kind: z.literal('plugin'), plugin: z.string() }),
  model: modelSourceSchema,
  tool: toolSourceSchema,
}))

/** A `UserMessage` (a tool result message is also a valid user message). */
export const userMessageSchema = z.object({
  id: nonEmpty,
  role: z.literal('user'),
  content: z.array(contentBlockSchema),
  source: messageSourceSchema,
})

/** An `AssistantMessage` (source `model`). */
export const assistantMessageSchema = z.object({
  id: nonEmpty,
  role: z.literal('assistant'),
  content: z.array(contentBlockSchema),
  source: modelSourceSchema,
})

/** A `ToolResultMessage`: role `user`, exactly one `tool-result` block, source `tool`. */
export const toolResultMessageSchema = z.object({
  id: nonEmpty,
  role: z.literal('user'),
  content: z.tuple([contentBlockSchemas['tool-result'] ?? z.never()]),
  source: toolSourceSchema,
})

/** Any message of the model's history. */
export const messageSchema = z.discriminatedUnion('role', [userMessageSchema, assistantMessageSchema])

const failureSchema = z.object({
  message: z.string(),
  code: z.string(),
  status: z.number().optional(),
  retryAfterMs: z.number().optional(),
  requestId: z.string().optional(),
  providerCode: z.string().optional(),
})

/** Open: why a model stream finished. */
export const finishReasonSchema: z.ZodType = openUnion('kind', () => ({
  stop: z.object({ kind: z.literal('stop') }),
  'tool-calls': z.object({ kind: z.literal('tool-calls') }),
  'max-tokens': z.object({ kind: z.literal('max-tokens') }),
  aborted: z.object({ kind: z.literal('aborted'), failure: failureSchema }),
  error: z.object({ kind: z.literal('error'), failure: failureSchema }),
}))

/** Open: why a turn ended. */
export const turnEndReasonSchema: z.ZodType = openUnion('kind', () => ({
  completed: z.object({ kind: z.literal('completed') }),
  'max-tokens': z.object({ kind: z.literal('max-tokens') }),
  blocked: z.object({ kind: z.literal('blocked') }),
  aborted: z.object({ kind: z.literal('aborted'), cause: z.string() }),
  error: z.object({ kind: z.literal('error'), failure: failureSchema }),
  interrupted: z.object({ kind: z.literal('interrupted') }),
}))

/** Open: what started a turn. */
export const turnTriggerSchema: z.ZodType = openUnion('kind', () => ({
  send: z.object({ kind: z.literal('send'), target: z.enum(['next-turn', 'next-step']) }),
  queued: z.object({ kind: z.literal('queued') }),
}))

/** Token usage of one model call. */
export const usageSchema = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  cacheReadTokens: z.number().nonnegative().optional(),
  cacheWriteTokens: z.number().nonnegative().optional(),
  reasoningTokens: z.number().nonnegative().optional(),
})

/** Closed: one stream chunk. */
export const streamChunkSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('block-start'), index: count, blockType: z.string() }),
  z.object({ type: z.literal('text-delta'), index: count, text: z.string() }),
  z.object({ type: z.literal('reasoning-delta'), index: count, text: z.string() }),
  z.object({
    type: z.literal('tool-call-delta'),
    index: count,
    id: nonEmpty.optional(),
    name: z.string().optional(),
    argumentsDelta: z.string(),
  }),
  z.object({ type: z.literal('block-end'), index: count, block: contentBlockSchema }),
  z.object({ type: z.literal('usage'), usage: usageSchema }),
  z.object({ type: z.literal('finish'), reason: finishReasonSchema }),
])

/** A `RequestHeader`: call config plus the optional system prompt, tools and message prefix. */
export const requestHeaderSchema = z.object({
  config: z.object({
    provider: nonEmpty,
    model: z.string(),
    temperature: z.number().optional(),
    maxTokens: ordinal.optional(),
    reasoningEffort: z.enum(REASONING_EFFORTS).optional(),
    stop: z.array(z.string()).optional(),
    cachePolicy: cachePolicySchema,
  }),
  system: z.string().optional(),
  tools: z
    .array(
      z.object({ name: nonEmpty, description: z.string(), parameters: z.record(z.string(), z.unknown()) }),
    )
    .optional(),
  messagePrefix: z.array(messageSchema).optional(),
})

/** An `InboxSplice`. Coordinates are range-checked by the inbox fold, which knows the lists. */
export const inboxSpliceSchema = z.object({
  target: z.enum(['next-turn', 'next-step']),
  start: z.number(),
  removedCount: z.number().optional(),
  inserted: z.array(userMessageSchema),
  outcome: z.literal('canceled').optional(),
})

const turnStep = { turn: ordinal, step: ordinal }

const tokenCount = z.number().int().nonnegative()

/** Schema of `compaction/start`. */
export const compactionStartSchema = z.object({
  id: z.string().min(1),
  trigger: z.enum(['threshold', 'overflow', 'manual']),
  strategy: z.enum(['prune', 'summarize']),
  window: tokenCount,
  tokensBefore: tokenCount,
  replaces: tokenCount,
  summarizes: tokenCount.optional(),
  turn: tokenCount.optional(),
  step: tokenCount.optional(),
})

/** Schema of `compaction/end`. */
export const compactionEndSchema = z.object({
  id: z.string().min(1),
  outcome: z.enum(['completed', 'rejected', 'failed', 'interrupted']),
  tokensAfter: tokenCount.optional(),
  reason: z.string().optional(),
  repaired: z.boolean().optional(),
})

/** The payload schema of every core event type. */
export const corePayloadSchemas = {
  'turn/start': z.object({ turn: ordinal, trigger: turnTriggerSchema }),
  'turn/end': z.object({ turn: ordinal, reason: turnEndReasonSchema }),
  'step/start': z.object(turnStep),
  'step/end': z.object(turnStep),
  'user/message': userMessageSchema,
  'assistant/chunk': z.object({ ...turnStep, chunk: streamChunkSchema }),
  'assistant/message': z.object({
    ...turnStep,
    message: assistantMessageSchema,
    usage: usageSchema.optional(),
    interrupted: z.boolean().optional(),
  }),
  'tool/call': z.object({ ...turnStep, callId: nonEmpty, name: z.string(), arguments: z.string() }),
  'tool/result': z.object({
    ...turnStep,
    message: toolResultMessageSchema,
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  }),
  'request/header': z.object({
    header: requestHeaderSchema,
    reason: z.enum(['initial', 'resume', 'change']),
  }),
  'request/retry': z.object({
    ...turnStep,
    attempt: ordinal,
    delayMs: z.number().min(0).max(Number.MAX_SAFE_INTEGER),
    failure: failureSchema,
  }),
  'session/end-seed': z.strictObject({}),
  'agent/inbox/spliced': inboxSpliceSchema,
  'compaction/start': compactionStartSchema,
  'compaction/end': compactionEndSchema,
} as const satisfies Record<string, z.ZodType>

/** Surface metadata: `append`, or `replace` of nodes `[start, end)` with the seqs they came from. */
export const surfaceMetaSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('append') }),
  z.object({ op: z.literal('replace'), start: count, end: count, sourceEventSeqs: z.array(count) }),
])

/** The envelope; `data` is checked separately against its type's schema. */
export const envelopeSchema = z.object({
  type: nonEmpty,
  seq: count.max(Number.MAX_SAFE_INTEGER),
  time: z.number(),
  data: z.unknown(),
  surface: surfaceMetaSchema.optional(),
})
