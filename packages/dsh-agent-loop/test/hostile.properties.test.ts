/**
 * The hostile-input property (issue 13): generated tool outcomes (throw, reject, hang, non-JSON,
 * huge, lone surrogates, duplicate ids), generated stream faults (early end, no finish, bad usage,
 * surrogates, transport failures) and generated send/inject/cancel timings. Whatever happens, every
 * turn ends, the log passes the invariant checks, every tool call is answered exactly once, nothing
 * ill-formed reaches the log, and the agent can run another turn.
 */
import type { Agent } from 'dsh-agent-loop'
import { type LlmAdapter, llmFailure, type StreamChunk, userText } from 'dsh-llm'
import { textBlockChunks } from 'dsh-llm/testing'
import type { Session } from 'dsh-session'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHarness, type Harness, lastTurnEnd } from './harness.ts'

const OUTCOMES = [
  'ok',
  'throw',
  'reject',
  'hang',
  'deaf',
  'non-json',
  'huge',
  'surrogate',
  'bad-block',
] as const
type Outcome = (typeof OUTCOMES)[number]

const FAULTS = [
  'none',
  'early-end',
  'no-finish',
  'bad-usage',
  'surrogate',
  'split-pair',
  'transport',
] as const
type Fault = (typeof FAULTS)[number]

interface Call {
  /** From a pool of three, so duplicates within a step and across steps are common. */
  readonly id: string
  readonly outcome: Outcome
  /** Whether the argument JSON is garbled. */
  readonly garbled: boolean
}

interface Plan {
  readonly calls: readonly Call[]
  readonly fault: Fault
}

type Op =
  | { readonly kind: 'send' }
  | { readonly kind: 'steer' }
  | { readonly kind: 'inject'; readonly lone: boolean }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'wait'; readonly ms: number }

const callArb: fc.Arbitrary<Call> = fc.record({
  id: fc.constantFrom('a', 'b', 'c'),
  outcome: fc.constantFrom(...OUTCOMES),
  garbled: fc.nat(9).map((n) => n < 2),
})

const planArb: fc.Arbitrary<Plan> = fc.record({
  calls: fc.array(callArb, { minLength: 0, maxLength: 3 }),
  fault: fc.constantFrom(...FAULTS),
})

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'send' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'steer' } as const) },
  { weight: 2, arbitrary: fc.boolean().map((lone) => ({ kind: 'inject', lone }) as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'cancel' } as const) },
  { weight: 3, arbitrary: fc.constantFrom(0, 1, 3).map((ms) => ({ kind: 'wait', ms }) as const) },
)

const tick = (ms: number) =>
  ms === 0
    ? new Promise<void>((resolve) => setImmediate(resolve))
    : new Promise<void>((resolve) => setTimeout(resolve, ms))

function toolChunks(index: number, call: Call): StreamChunk[] {
  const args = call.garbled ? '{"outcome": "' : JSON.stringify({ outcome: call.outcome })
  return [
    { type: 'block-start', index, blockType: 'tool-call' },
    { type: 'tool-call-delta', index, id: call.id as never, name: 'hostile', argumentsDelta: args },
    {
      type: 'block-end',
      index,
      block: { type: 'tool-call', id: call.id as never, name: 'hostile', arguments: args },
    },
  ]
}

/** The chunks of one planned answer, with its fault applied. */
function chunksFor(plan: Plan, call: number): StreamChunk[] {
  const text =
    plan.fault === 'surrogate'
      ? `lone \uD800 here ${call}`
      : plan.fault === 'split-pair'
        ? ''
        : `answer ${call}`
  const lead: StreamChunk[] =
    plan.fault === 'split-pair'
      ? [
          { type: 'block-start', index: 0, blockType: 'text' },
          { type: 'text-delta', index: 0, text: 'x\uD83D' },
          { type: 'text-delta', index: 0, text: '\uDE00y' },
          { type: 'block-end', index: 0, block: { type: 'text', text: 'x\uD83D\uDE00y' } },
        ]
      : textBlockChunks(0, text, { deltas: 'words' })
  const body = [...lead, ...plan.calls.flatMap((c, i) => toolChunks(i + 1, c))]
  const usage: StreamChunk =
    plan.fault === 'bad-usage'
      ? { type: 'usage', usage: { inputTokens: -1, outputTokens: Number.NaN } }
      : { type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } }
  const finish: StreamChunk = {
    type: 'finish',
    reason: plan.calls.length > 0 ? { kind: 'tool-calls' } : { kind: 'stop' },
  }
  switch (plan.fault) {
    case 'early-end':
      // Cut inside the answer: a tool call may be left without its block-end.
      return body.slice(0, Math.max(1, body.length - 2))
    case 'no-finish':
      return [...body, usage]
    case 'transport':
      return [
        ...body.slice(0, Math.max(1, body.length - 1)),
        { type: 'finish', reason: { kind: 'error', failure: llmFailure('TRANSPORT', 'connection reset') } },
      ]
    default:
      return [...body, usage, finish]
  }
}

/** The scripted model of one run: plays `plans` in turn, then answers plain text forever once calm. */
interface Script {
  plans: readonly Plan[]
  calls: number
  calm: boolean
}

function hostileModel(scripts: Map<string, Script>): LlmAdapter {
  return {
    async *stream(request) {
      const script = scripts.get(request.sessionId ?? '')
      const call = script === undefined ? 0 : script.calls++
      const plan = script === undefined || script.calm ? undefined : script.plans[call % script.plans.length]
      const chunks =
        plan === undefined
          ? textBlockChunks(0, 'calm').concat([{ type: 'finish', reason: { kind: 'stop' } }])
          : chunksFor(plan, call)
      for (const chunk of chunks) {
        await new Promise<void>((resolve) => setImmediate(resolve))
        if (request.signal?.aborted === true) {
          yield { type: 'finish', reason: { kind: 'aborted', failure: llmFailure('ABORTED', 'aborted') } }
          return
        }
        yield chunk
      }
    },
  }
}

function registerHostileTool(h: Harness): void {
  h.app.tools.register({
    name: 'hostile',
    description: 'does whatever its arguments say',
    parameters: z.object({ outcome: z.enum(OUTCOMES) }),
    execute: ({ outcome }, { signal }) => {
      switch (outcome) {
        case 'ok':
          return 'fine'
        case 'throw':
          throw new Error('tool broke')
        case 'reject':
          return Promise.reject('a plain string')
        case 'hang':
          // Honours its signal: stops when the call times out or the turn is cancelled.
          return new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('stopped')))
        case 'deaf':
          return new Promise<string>(() => undefined)
        case 'non-json':
          return [{ type: 'text', text: 10n }] as never
        case 'huge':
          return 'x'.repeat(100_000)
        case 'surrogate':
          return `half \uDC00 a pair`
        case 'bad-block':
          return [{ type: 'text' }] as never
      }
    },
  })
}

async function play(agent: Agent, ops: readonly Op[]): Promise<void> {
  let n = 0
  for (const op of ops) {
    n++
    switch (op.kind) {
      case 'send':
        agent.send(userText(`prompt ${n}`))
        break
      case 'steer':
        agent.steer(userText(`steer ${n}`))
        break
      case 'inject':
        agent.inject(
          userText(op.lone ? `context \uD801 ${n}` : `context ${n}`, { kind: 'plugin', plugin: 'prop' }),
        )
        break
      case 'cancel':
        agent.cancel(`cancel ${n}`)
        break
      case 'wait':
        await tick(op.ms)
        break
    }
  }
}

function isWellFormedText(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed()
}

function allWellFormed(value: unknown): boolean {
  if (typeof value === 'string') return isWellFormedText(value)
  if (value === null || typeof value !== 'object') return true
  for (const key of Object.keys(value)) {
    if (!isWellFormedText(key) || !allWellFormed((value as Record<string, unknown>)[key])) return false
  }
  return true
}

const TERMINAL = new Set(['completed', 'aborted', 'error', 'max-steps', 'max-tokens', 'blocked'])

/** Every turn closed with a terminal reason; every tool call of a step answered exactly once. */
function checkLog(session: Session): void {
  let open: number | undefined
  let proposed = new Map<string, number>()
  for (const event of session.events) {
    const where = `${event.type} at seq ${event.seq}`
    switch (event.type) {
      case 'turn/start':
        expect(open, where).toBeUndefined()
        open = event.data.turn
        break
      case 'turn/end':
        expect(TERMINAL.has(event.data.reason.kind), where).toBe(true)
        open = undefined
        break
      case 'step/start':
        proposed = new Map()
        break
      case 'assistant/message':
        for (const block of event.data.message.content) {
          if (block.type !== 'tool-call') continue
          expect(proposed.has(block.id), `${where}: call id ${block.id} twice in one step`).toBe(false)
          proposed.set(block.id, 0)
        }
        break
      case 'tool/result': {
        const id = event.data.message.content[0].toolCallId
        proposed.set(id, (proposed.get(id) ?? 0) + 1)
        break
      }
      case 'step/end':
        for (const [id, answers] of proposed) expect([id, answers], where).toEqual([id, 1])
        break
      default:
        break
    }
  }
  expect(open).toBeUndefined()
}

describe('hostile input (issue 13 property)', () => {
  let h: Harness
  const scripts = new Map<string, Script>()

  beforeAll(async () => {
    // Stream faults are generated on purpose, so the stream-grammar check (which reports provider
    // faults) is left out; the log grammar and request reconstruction stay mounted.
    h = await createHarness([], {
      config: { toolTimeoutMs: 4, abortGraceMs: 2 },
      invariants: { skip: ['stream-grammar'] },
    })
    h.app.llm.registerAdapter('hostile', hostileModel(scripts))
    registerHostileTool(h)
  })

  it('every turn ends, the log stays well-formed and the agent can run another turn', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(planArb, { minLength: 1, maxLength: 4 }),
        fc.array(opArb, { minLength: 1, maxLength: 8 }),
        async (plans, ops) => {
          const agent = await h.create({
            provider: 'hostile',
            maxSteps: 3,
            retry: { maxAttempts: 2, initialDelayMs: 0 },
          })
          const script: Script = { plans, calls: 0, calm: false }
          scripts.set(agent.session.id, script)
          const errorsBefore = h.errors.length
          try {
            await play(agent, ops)
            await agent.whenIdle()
            expect(agent.status).toBe('idle')
            checkLog(agent.session)
            expect(allWellFormed(agent.session.events)).toBe(true)
            expect(h.app.invariants.takeViolations()).toEqual([])
            // Provider failures that outlive their retries are reported; the loop itself never fails.
            const codes = h.errors.slice(errorsBefore).map((error) => error.code)
            expect(codes.filter((code) => code !== 'TRANSPORT')).toEqual([])
            // And the session can run another turn.
            script.calm = true
            agent.inbox.clear()
            agent.send(userText('one more'))
            await agent.whenIdle()
            expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
            checkLog(agent.session)
            expect(h.app.invariants.takeViolations()).toEqual([])
          } finally {
            scripts.delete(agent.session.id)
            await agent.dispose()
          }
        },
      ),
      { numRuns: 200 },
    )
  }, 60_000)
})
