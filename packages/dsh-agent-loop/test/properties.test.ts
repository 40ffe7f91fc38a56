/**
 * Random sequences of send / steer / inject / cancel against a scripted model. Whatever the
 * interleaving, the log stays well-formed and every request is a pure function of the log prefix.
 */

import type { Agent } from 'dsh-agent-loop'
import {
  type LlmAdapter,
  type LlmRequest,
  type LoopRequestMark,
  llmFailure,
  loopRequestMark,
  type StreamChunk,
  userText,
} from 'dsh-llm'
import { textResponse, toolCallsResponse } from 'dsh-llm/testing'
import { composeRequest, foldMessages, foldRequestHeader, type Session } from 'dsh-session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHarness } from './harness.ts'

/** What the scripted model answers on a call: text, some tool calls, or a provider failure. */
type Plan =
  | { readonly kind: 'text' }
  | { readonly kind: 'tools'; readonly tools: readonly ('quick' | 'slow' | 'solo' | 'broken')[] }
  | { readonly kind: 'fail' }

type Op =
  | { readonly kind: 'send'; readonly wakeup: boolean }
  | { readonly kind: 'steer' }
  | { readonly kind: 'inject' }
  | { readonly kind: 'cancel'; readonly keepInbox: boolean }
  | { readonly kind: 'wait'; readonly ms: number }

const planArb: fc.Arbitrary<Plan> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'text' } as const) },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.constantFrom('quick', 'slow', 'solo', 'broken'), { minLength: 1, maxLength: 3 })
      .map((tools) => ({ kind: 'tools', tools }) as const),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'fail' } as const) },
)

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.boolean().map((wakeup) => ({ kind: 'send', wakeup }) as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'steer' } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'inject' } as const) },
  { weight: 2, arbitrary: fc.boolean().map((keepInbox) => ({ kind: 'cancel', keepInbox }) as const) },
  { weight: 4, arbitrary: fc.constantFrom(0, 1, 2, 4).map((ms) => ({ kind: 'wait', ms }) as const) },
)

const tick = (ms: number) =>
  ms === 0
    ? new Promise<void>((resolve) => setImmediate(resolve))
    : new Promise((resolve) => setTimeout(resolve, ms))

function chunksFor(plan: Plan, call: number): readonly StreamChunk[] {
  switch (plan.kind) {
    case 'text':
      return textResponse(`answer ${call}`, { deltas: 'words' })
    case 'tools':
      return toolCallsResponse(
        plan.tools.map((name, i) => ({
          id: `c${call}-${i}`,
          name,
          args: name === 'broken' ? '{"oops' : { n: i },
        })),
      )
    case 'fail':
      return [
        { type: 'finish', reason: { kind: 'error', failure: llmFailure('AUTH', `refused call ${call}`) } },
      ]
  }
}

/** A model that plays `plans` in a cycle, one chunk per macrotask turn, and keeps each request's mark. */
function cyclingModel(plans: readonly Plan[]) {
  const seen: { request: LlmRequest; mark: LoopRequestMark | undefined }[] = []
  const adapter: LlmAdapter = {
    async *stream(request) {
      const call = seen.length
      seen.push({ request, mark: loopRequestMark(request) })
      const plan = plans[call % plans.length] ?? { kind: 'text' }
      for (const chunk of chunksFor(plan, call)) {
        await new Promise<void>((resolve) => setImmediate(resolve))
        if (request.signal?.aborted === true) {
          yield { type: 'finish', reason: { kind: 'aborted', failure: llmFailure('ABORTED', 'aborted') } }
          return
        }
        yield chunk
      }
    },
  }
  return { adapter, seen }
}

/**
 * Seqs contiguous; turns and steps balanced; every tool call of a step answered exactly once; and
 * user messages inside a step only where they cannot split anything: the entered batch right after
 * `step/start`, or the outbox drain after the step's answer and all of its tool results.
 */
function checkLog(session: Session): void {
  const events = session.events
  expect(events.map((event) => event.seq)).toEqual(events.map((_event, index) => index))
  let openTurn: number | undefined
  let openStep: number | undefined
  let phase: 'entry' | 'model' | 'answered' = 'entry'
  let calls = new Map<string, number>()
  const allAnswered = () => [...calls.values()].every((answers) => answers === 1)
  for (const event of events) {
    const where = `${event.type} at seq ${event.seq}`
    switch (event.type) {
      case 'turn/start':
        expect(openTurn, where).toBeUndefined()
        openTurn = event.data.turn
        break
      case 'turn/end':
        expect(event.data.turn, where).toBe(openTurn)
        expect(openStep, where).toBeUndefined()
        openTurn = undefined
        break
      case 'step/start':
        expect(openTurn, where).toBe(event.data.turn)
        expect(openStep, where).toBeUndefined()
        openStep = event.data.step
        phase = 'entry'
        calls = new Map()
        break
      case 'step/end':
        expect(event.data.step, where).toBe(openStep)
        for (const [id, answers] of calls) expect([id, answers], where).toEqual([id, 1])
        openStep = undefined
        break
      case 'request/header':
      case 'assistant/chunk':
        expect(phase, where).not.toBe('answered')
        phase = 'model'
        break
      case 'assistant/message':
        phase = 'answered'
        for (const block of event.data.message.content) if (block.type === 'tool-call') calls.set(block.id, 0)
        break
      case 'tool/result': {
        const id = event.data.message.content[0].toolCallId
        expect(calls.has(id), where).toBe(true)
        calls.set(id, (calls.get(id) ?? 0) + 1)
        break
      }
      case 'user/message':
        if (openStep !== undefined && phase !== 'entry') {
          expect({ phase, allAnswered: allAnswered() }, where).toEqual({
            phase: 'answered',
            allAnswered: true,
          })
        }
        break
      default:
        break
    }
  }
  expect(openTurn).toBeUndefined()
}

function checkRequests(
  session: Session,
  seen: readonly { request: LlmRequest; mark: LoopRequestMark | undefined }[],
) {
  for (const { request, mark } of seen) {
    expect(mark?.sessionId).toBe(session.id)
    const prefix = session.events.slice(0, mark?.logLength ?? 0)
    const header = foldRequestHeader(prefix)
    expect(header).toBeDefined()
    if (header === undefined) continue
    const { signal: _signal, ...sent } = request
    expect(sent).toEqual(composeRequest(header.header, foldMessages(prefix), { sessionId: session.id }))
    expect(Object.isFrozen(request) && Object.isFrozen(request.messages)).toBe(true)
  }
}

async function play(agent: Agent, ops: readonly Op[]): Promise<void> {
  let n = 0
  for (const op of ops) {
    n++
    switch (op.kind) {
      case 'send':
        agent.send(userText(`prompt ${n}`), { wakeup: op.wakeup })
        break
      case 'steer':
        agent.steer(userText(`steer ${n}`))
        break
      case 'inject':
        agent.inject(userText(`context ${n}`, { kind: 'plugin', plugin: 'prop' }))
        break
      case 'cancel':
        agent.cancel(`cancel ${n}`, { keepInbox: op.keepInbox })
        break
      case 'wait':
        await tick(op.ms)
        break
    }
  }
}

describe('agent loop properties (must show 11)', () => {
  it('any sequence of send/steer/inject/cancel leaves a balanced, contiguous, re-derivable log', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(planArb, { minLength: 1, maxLength: 6 }),
        fc.array(opArb, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 3 }),
        async (plans, ops, cap) => {
          const h = await createHarness([], { config: { maxToolConcurrency: cap } })
          const model = cyclingModel(plans)
          h.app.llm.registerAdapter('cycle', model.adapter)
          const tool = (name: string, mode: 'parallel' | 'exclusive', delay: number) =>
            h.app.tools.register({
              name,
              description: name,
              mode,
              parameters: z.object({ n: z.number() }),
              execute: async ({ n }) => {
                await tick(delay)
                return `${name} ${n}`
              },
            })
          tool('quick', 'parallel', 0)
          tool('slow', 'parallel', 3)
          tool('solo', 'exclusive', 1)
          tool('broken', 'parallel', 0)
          const agent = await h.create({ provider: 'cycle', maxSteps: 4, retry: { maxAttempts: 1 } })
          await play(agent, ops)
          await agent.whenIdle()
          if (agent.inbox.nextTurn.length > 0 || agent.inbox.nextStep.length > 0) {
            agent.send(userText('final'))
            await agent.whenIdle()
          }
          expect(agent.status).toBe('idle')
          checkLog(agent.session)
          checkRequests(agent.session, model.seen)
          expect(h.app.invariants.takeViolations()).toEqual([])
          expect(h.errors.filter((error) => error.code !== 'AUTH')).toEqual([])
          await agent.dispose()
        },
      ),
      { numRuns: 50 },
    )
  }, 20_000)
})
