/**
 * The hand-written fast checks in front of zod must never change a verdict: `validateEvent` accepts
 * exactly what the envelope and payload zod schemas accept, on random valid and broken values. And
 * the common case must not reach zod at all (that is the point of the fast path).
 */
import { sessionEventDefinition, surfaceMetaSchema, validateEvent } from 'dsh-session'
import fc from 'fast-check'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { z } from 'zod'

/** Values that break most fields: wrong types, edge numbers, holes. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(undefined, null, 0, -0, -1, 1.5, 2 ** 53, Number.NaN, Infinity, '', 'x', true, [], {}),
  fc.jsonValue({ maxDepth: 2 }),
)

/** Builds arbitraries that are valid (`broken` false) or valid with occasional broken fields. */
function shapes(broken: boolean) {
  const field = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
    broken ? fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: junk, weight: 1 }) : valid
  /** A record whose `optional` keys may be absent; sometimes with an extra key (zod objects allow it). */
  const record = (
    fields: Record<string, fc.Arbitrary<unknown>>,
    optional: readonly string[] = [],
  ): fc.Arbitrary<unknown> => {
    const model: Record<string, fc.Arbitrary<unknown>> = {}
    for (const [key, arb] of Object.entries(fields)) model[key] = field(arb)
    const requiredKeys = Object.keys(fields).filter((key) => !optional.includes(key))
    const base = fc.record(model, { requiredKeys })
    return field(
      fc.tuple(base, fc.boolean()).map(([value, extra]) => (extra ? { ...value, note: 'extra' } : value)),
    )
  }
  const tag = <T extends string>(value: T, ...others: string[]) =>
    broken
      ? fc.oneof({ arbitrary: fc.constant(value), weight: 8 }, fc.constantFrom(...others))
      : fc.constant(value)
  const str = fc.string({ maxLength: 6 })
  const nonEmpty = fc.string({ minLength: 1, maxLength: 6 })
  const ordinal = fc.integer({ min: 1, max: 1000 })
  const count = fc.nat(1000)
  const amount = fc.oneof(fc.nat(10_000), fc.double({ min: 0, max: 1e6, noNaN: true }))

  const { block } = fc.letrec<{ block: unknown }>((self) => ({
    block: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      record({ type: tag('text', 'reasoning', 'tool-call'), text: str }),
      record({ type: tag('reasoning', 'text'), text: str }),
      record({ type: tag('tool-call', 'text'), id: nonEmpty, name: str, arguments: str }),
      record(
        {
          type: tag('tool-result', 'text'),
          toolCallId: nonEmpty,
          content: fc.array(self('block'), { maxLength: 2 }),
          isError: fc.boolean(),
        },
        ['isError'],
      ),
      record({ type: tag('image', 'x-custom'), url: str }),
    ),
  }))
  const content = fc.array(block, { maxLength: 3 })
  const modelSource = record({ kind: tag('model', 'tool'), provider: str, model: str })
  const toolSource = record({ kind: tag('tool', 'model'), callId: nonEmpty })
  const source = fc.oneof(
    record({ kind: tag('user', 'plugin') }),
    record({ kind: tag('plugin', 'user'), plugin: str }),
    modelSource,
    toolSource,
    record({ kind: tag('mcp', 'x-custom'), server: str }),
  )
  const usage = record(
    {
      inputTokens: amount,
      outputTokens: amount,
      cacheReadTokens: amount,
      cacheWriteTokens: amount,
      reasoningTokens: amount,
    },
    ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'],
  )
  const failure = record(
    { message: str, code: str, status: fc.integer(), retryAfterMs: count, requestId: str },
    ['status', 'retryAfterMs', 'requestId'],
  )
  const finish = fc.oneof(
    record({ kind: tag('stop', 'tool-calls', 'max-tokens') }),
    record({ kind: tag('tool-calls', 'stop') }),
    record({ kind: tag('error', 'aborted', 'stop'), failure }),
    record({ kind: tag('aborted', 'error'), failure }),
    record({ kind: tag('paused', 'later') }),
  )
  const chunk = fc.oneof(
    record({ type: tag('text-delta', 'reasoning-delta', 'finish'), index: count, text: str }),
    record({ type: tag('reasoning-delta', 'text-delta'), index: count, text: str }),
    record(
      {
        type: tag('tool-call-delta', 'text-delta'),
        index: count,
        id: nonEmpty,
        name: str,
        argumentsDelta: str,
      },
      ['id', 'name'],
    ),
    record({ type: tag('block-start', 'block-end'), index: count, blockType: str }),
    record({ type: tag('block-end', 'block-start'), index: count, block }),
    record({ type: tag('usage', 'finish'), usage }),
    record({ type: tag('finish', 'usage'), reason: finish }),
  )
  const turnStep = { turn: ordinal, step: ordinal }
  const assistantMessage = record({
    id: nonEmpty,
    role: tag('assistant', 'user'),
    content,
    source: modelSource,
  })
  const resultBlock = record({
    type: tag('tool-result', 'text'),
    toolCallId: nonEmpty,
    content,
    isError: fc.boolean(),
  })
  const toolResultMessage = record({
    id: nonEmpty,
    role: tag('user', 'assistant'),
    content: broken
      ? fc.oneof(fc.tuple(resultBlock), fc.array(resultBlock, { maxLength: 2 }))
      : fc.tuple(resultBlock),
    source: toolSource,
  })
  const userMessage = record({ id: nonEmpty, role: tag('user', 'assistant'), content, source })
  const trigger = fc.oneof(
    record({
      kind: tag('send', 'queued'),
      target: broken
        ? fc.constantFrom('next-turn', 'next-step', 'now')
        : fc.constantFrom('next-turn', 'next-step'),
    }),
    record({ kind: tag('queued', 'send') }),
    record({ kind: tag('scheduled', 'cron') }),
  )
  const endReason = fc.oneof(
    record({ kind: fc.constantFrom('completed', 'max-tokens', 'blocked', 'interrupted') }),
    record({ kind: tag('aborted', 'error'), cause: str }),
    record({ kind: tag('error', 'aborted'), failure }),
    record({ kind: tag('handoff', 'x-custom') }),
  )
  const oneOf = <T extends string>(valid: readonly T[], ...others: string[]) =>
    fc.constantFrom<string>(...valid, ...(broken ? others : []))
  const tool = record({
    name: nonEmpty,
    description: str,
    parameters: fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), {
      maxKeys: 3,
      noNullPrototype: true,
    }),
  })
  const config = record(
    {
      provider: nonEmpty,
      model: str,
      temperature: fc.double({ min: 0, max: 2, noNaN: true }),
      maxTokens: ordinal,
      reasoningEffort: oneOf(['low', 'medium', 'high'], 'max'),
      stop: fc.array(str, { maxLength: 2 }),
    },
    ['temperature', 'maxTokens', 'reasoningEffort', 'stop'],
  )
  const header = record(
    {
      config,
      system: str,
      tools: fc.array(tool, { maxLength: 2 }),
      messagePrefix: fc.array(fc.oneof(userMessage, assistantMessage), { maxLength: 2 }),
    },
    ['system', 'tools', 'messagePrefix'],
  )
  const payloads: Record<string, fc.Arbitrary<unknown>> = {
    'request/header': record({ header, reason: oneOf(['initial', 'resume', 'change'], 'later') }),
    'agent/inbox/spliced': record(
      {
        target: oneOf(['next-turn', 'next-step'], 'now'),
        start: fc.integer({ min: -3, max: 100 }),
        removedCount: count,
        inserted: fc.array(userMessage, { maxLength: 2 }),
        outcome: oneOf(['canceled'], 'done'),
      },
      ['removedCount', 'outcome'],
    ),
    'assistant/chunk': record({ ...turnStep, chunk }),
    'step/start': record(turnStep),
    'step/end': record(turnStep),
    'tool/call': record({ ...turnStep, callId: nonEmpty, name: str, arguments: str }),
    'assistant/message': record(
      { ...turnStep, message: assistantMessage, usage, interrupted: fc.boolean() },
      ['usage', 'interrupted'],
    ),
    'tool/result': record(
      { ...turnStep, message: toolResultMessage, error: record({ code: str, message: str }) },
      ['error'],
    ),
    'user/message': userMessage,
    'turn/start': record({ turn: ordinal, trigger }),
    'turn/end': record({ turn: ordinal, reason: endReason }),
  }
  const surface = fc.oneof(
    record({ op: tag('append', 'replace') }),
    record({
      op: tag('replace', 'append'),
      start: count,
      end: count,
      sourceEventSeqs: fc.array(count, { maxLength: 3 }),
    }),
  )
  const envelope = record({ seq: count, time: fc.integer(), surface }, ['surface'])
  return { payloads, envelope }
}

const FAST_TYPES = [
  'assistant/chunk',
  'step/start',
  'step/end',
  'tool/call',
  'assistant/message',
  'tool/result',
  'user/message',
  'turn/start',
  'turn/end',
  'request/header',
  'agent/inbox/spliced',
] as const

function schemaOf(type: string): z.ZodType {
  const definition = sessionEventDefinition(type)
  if (definition === undefined) throw new Error(`no definition of ${type}`)
  return definition.schema
}

/** The zod verdict on a whole event, the way the contract states it: envelope, then payload. */
const envelopeSchema = z.object({
  type: z.string().min(1),
  seq: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  time: z.number(),
  surface: surfaceMetaSchema.optional(),
})

function accepted(run: () => unknown): boolean {
  try {
    run()
    return true
  } catch {
    return false
  }
}

/** Deep copy that keeps `undefined`, NaN, -0 and holes as they are (structuredClone does). */
function fresh<T>(value: T): T {
  return structuredClone(value)
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('fast validation agrees with zod', () => {
  const broken = shapes(true)
  for (const type of FAST_TYPES) {
    test(`${type}: validateEvent accepts exactly what the payload schema accepts`, () => {
      const payload = broken.payloads[type]
      if (payload === undefined) throw new Error(`no arbitrary for ${type}`)
      fc.assert(
        fc.property(payload, (data) => {
          const zodVerdict = schemaOf(type).safeParse(fresh(data)).success
          const verdict = accepted(() => validateEvent({ type, seq: 0, time: 0, data: fresh(data) }))
          expect(verdict).toBe(zodVerdict)
        }),
        { numRuns: 400 },
      )
    })
  }

  test('the envelope: validateEvent accepts exactly what the envelope schema accepts', () => {
    fc.assert(
      fc.property(broken.envelope, (envelope) => {
        const isObject = typeof envelope === 'object' && envelope !== null && !Array.isArray(envelope)
        // A known type and a valid payload, so only the envelope's other members decide.
        const event = isObject ? { ...envelope, type: 'step/start', data: { turn: 1, step: 1 } } : envelope
        const zodVerdict = envelopeSchema.safeParse(fresh(event)).success
        expect(accepted(() => validateEvent(fresh(event)))).toBe(zodVerdict)
      }),
      { numRuns: 1500 },
    )
  })

  test('a rejected payload gets zod’s message and path', () => {
    expect(() =>
      validateEvent({
        type: 'assistant/chunk',
        seq: 4,
        time: 0,
        data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: -1, text: 'a' } },
      }),
    ).toThrow(
      'invalid assistant/chunk event at seq 4: data.chunk.index: Too small: expected number to be >=0',
    )
  })
})

describe('valid values of the known kinds never reach zod', () => {
  const valid = shapes(false)
  for (const type of FAST_TYPES) {
    test(type, () => {
      const schema = schemaOf(type)
      const spy = vi.spyOn(schema, 'safeParse')
      const payload = valid.payloads[type]
      if (payload === undefined) throw new Error(`no arbitrary for ${type}`)
      fc.assert(
        fc.property(payload, (data) => {
          spy.mockClear()
          validateEvent({ type, seq: 0, time: 0, data })
          // Unknown open kinds (an `image` block, an `mcp` source) are zod's to accept: only count known ones.
          if (!JSON.stringify(data).match(/"(image|x-custom|mcp|paused|scheduled|handoff)"/)) {
            expect(spy).not.toHaveBeenCalled()
          }
        }),
        { numRuns: 200 },
      )
    })
  }
})
