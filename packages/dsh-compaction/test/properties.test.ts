/**
 * Random sessions — parallel tool calls, tool errors, cancelled calls, steering, interrupted turns,
 * forks, and compactions (chained, at random points, some crashing half way and repaired): in every
 * request the log implies, each tool result follows its call and no call lacks its result; every
 * log passes the offline checks.
 */
import type { Context } from 'cordis'
import { type CompactionStrategy, compactSession, resolveSettings, TokenEstimator } from 'dsh-compaction'
import { checkSessionLog, reconstructRequests } from 'dsh-invariants'
import { createCheckedApp, installInvariantGuard } from 'dsh-invariants/vitest'
import {
  BlockAssembler,
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  isToolResultMessage,
  type Message,
  userText,
} from 'dsh-llm'
import { errorResponse, textResponse, toolCallsResponse } from 'dsh-llm/testing'
import { appendInput, repairClosers, type Session, type SurfaceMeta } from 'dsh-session'
import fc from 'fast-check'
import { beforeAll, expect, test } from 'vitest'

installInvariantGuard()

interface Call {
  readonly chars: number
  readonly outcome: 'ok' | 'error' | 'cancelled'
}
interface Step {
  readonly steer: number
  readonly calls: readonly Call[]
  readonly compactBefore: CompactionStrategy | 'auto' | undefined
  readonly compactInStep: CompactionStrategy | 'auto' | undefined
}
interface Turn {
  readonly steps: readonly Step[]
  /** The process dies in the last step with this many of its results written (then repair runs). */
  readonly crashAfter: number | undefined
  /** Between this turn and the next: a compaction, a crashed one (prunes written before the crash), a fork. */
  readonly compactAfter: CompactionStrategy | 'auto' | undefined
  readonly crashedCompaction: number | undefined
  readonly fork: number | undefined
}
interface Scenario {
  readonly turns: readonly Turn[]
  readonly keepTokens: number
  /** Characters of each summary: a long one is rejected; 0 makes the summarizing call fail. */
  readonly summaryChars: readonly number[]
}

const strategy = fc.option(fc.constantFrom<CompactionStrategy | 'auto'>('auto', 'prune', 'summarize'), {
  nil: undefined,
  freq: 3,
})
const call: fc.Arbitrary<Call> = fc.record({
  chars: fc.constantFrom(40, 900, 6000, 20_000),
  outcome: fc.constantFrom<Call['outcome']>('ok', 'ok', 'ok', 'error', 'cancelled'),
})
const step: fc.Arbitrary<Step> = fc.record({
  steer: fc.nat(2),
  calls: fc.array(call, { maxLength: 3 }),
  compactBefore: strategy,
  compactInStep: strategy,
})
const turn: fc.Arbitrary<Turn> = fc.record({
  steps: fc.array(step, { minLength: 1, maxLength: 3 }),
  crashAfter: fc.option(fc.nat(3), { nil: undefined, freq: 4 }),
  compactAfter: strategy,
  crashedCompaction: fc.option(fc.nat(3), { nil: undefined, freq: 5 }),
  fork: fc.option(fc.nat(1000), { nil: undefined, freq: 4 }),
})
const scenario: fc.Arbitrary<Scenario> = fc.record({
  turns: fc.array(turn, { minLength: 1, maxLength: 5 }),
  keepTokens: fc.constantFrom(0, 300, 3000),
  summaryChars: fc.array(fc.constantFrom(0, 30, 400, 200_000), { minLength: 1, maxLength: 4 }),
})

/** The ways `messages` breaks adjacency, as text (empty when every call is answered right after it). */
function adjacencyProblems(messages: readonly Message[]): string[] {
  const problems: string[] = []
  let pending = new Set<string>()
  messages.forEach((message, index) => {
    if (isToolResultMessage(message)) {
      const id = message.content[0].toolCallId
      if (!pending.delete(id)) problems.push(`message ${index}: result for ${id} follows no pending call`)
      return
    }
    if (pending.size > 0) problems.push(`message ${index}: calls ${[...pending].join(', ')} lack results`)
    pending = new Set()
    if (message.role === 'assistant') {
      for (const block of message.content) if (block.type === 'tool-call') pending.add(block.id)
    }
  })
  if (pending.size > 0) problems.push(`end: calls ${[...pending].join(', ')} lack results`)
  return problems
}

/** Builds a scenario's log the way the loop and the plugin would write it. */
class Builder {
  session: Session
  readonly sessions: Session[] = []
  private calls = 0
  private summaries = 0
  private readonly estimator = new TokenEstimator()

  constructor(
    private readonly app: Context,
    private readonly scenario: Scenario,
    session: Session,
  ) {
    this.session = session
    this.sessions.push(session)
  }

  private append(type: string, data: unknown, surface?: SurfaceMeta): void {
    const append = this.session.append as (type: string, data: unknown, surface?: SurfaceMeta) => unknown
    append.call(this.session, type, data, surface)
  }

  private repair(): void {
    for (const closer of repairClosers(this.session.events)) {
      if (closer.surface === undefined) appendInput(this.session, closer)
      else this.append(closer.type, closer.data, closer.surface)
    }
  }

  private async compact(
    kind: CompactionStrategy | 'auto' | undefined,
    position?: { turn: number; step: number },
  ) {
    if (kind === undefined || this.session.requestHeader() === undefined) return
    const chars = this.scenario.summaryChars[this.summaries++ % this.scenario.summaryChars.length] ?? 30
    const settings = resolveSettings({ keepTokens: this.scenario.keepTokens }, 16_000)
    await compactSession({
      session: this.session,
      trigger: position === undefined ? 'manual' : 'threshold',
      settings,
      estimator: this.estimator,
      strategy: kind,
      stream: async function* () {
        if (chars === 0) yield* errorResponse('SERVER', 'summarizer down')
        else yield* textResponse('s'.repeat(chars))
      },
      ...(position === undefined ? {} : { position }),
    })
  }

  /** A prune compaction that dies after `written` of its replaces; repair then rolls it back. */
  private crashedPrune(written: number): void {
    const history = this.session.deriveMessages()
    const targets: number[] = []
    history.forEach((message, index) => {
      if (isToolResultMessage(message) && this.estimator.message(message) > 1024) targets.push(index)
    })
    if (targets.length < 2) return
    const id = `crashed-${this.session.seq}`
    this.append('compaction/start', {
      id,
      trigger: 'manual',
      strategy: 'prune',
      window: 16_000,
      tokensBefore: 1,
      replaces: targets.length,
    })
    // The seqs behind the surface nodes, folded the way the session folds them.
    const seqs: number[] = []
    for (const event of this.session.events) {
      const surface = event.surface
      const contributes =
        event.type === 'user/message' ||
        event.type === 'tool/result' ||
        (event.type === 'assistant/message' && event.data.message.content.length > 0)
      if (!contributes) continue
      if (surface?.op === 'replace') seqs.splice(surface.start, surface.end - surface.start, event.seq)
      else seqs.push(event.seq)
    }
    for (const index of targets.slice(0, Math.min(written, targets.length - 1))) {
      const original = history[index]
      const seq = seqs[index]
      if (original === undefined || seq === undefined || !isToolResultMessage(original)) continue
      const pruned = createToolResultMessage({
        id: `${id}:${original.id}`,
        callId: original.content[0].toolCallId,
        content: [{ type: 'text', text: 'pruned' }],
      })
      this.append('user/message', pruned, {
        op: 'replace',
        start: index,
        end: index + 1,
        sourceEventSeqs: [seq],
      })
    }
    const before = this.session.deriveMessages().length
    this.repair()
    expect(this.session.deriveMessages()).toHaveLength(before)
    expect(this.session.deriveMessages()).toEqual(history)
  }

  private modelCall(turn: number, stepNumber: number, calls: readonly Call[]): string[] {
    const ids = calls.map(() => `call-${this.calls++}`)
    const chunks =
      calls.length === 0
        ? textResponse('ok')
        : toolCallsResponse(ids.map((id) => ({ id, name: 'read', args: { path: id } })))
    const assembler = new BlockAssembler()
    for (const chunk of chunks) {
      this.append('assistant/chunk', { turn, step: stepNumber, chunk })
      assembler.push(chunk)
    }
    const message = createAssistantMessage({
      content: assembler.blocks(),
      source: { kind: 'model', provider: 'p', model: 'm' },
    })
    this.append('assistant/message', { turn, step: stepNumber, message })
    return ids
  }

  private result(turn: number, stepNumber: number, id: string, spec: Call): void {
    if (spec.outcome === 'cancelled') {
      const text = `Tool call ${id} was cancelled before it started.`
      const message = createToolResultMessage({
        callId: CallId(id),
        content: [{ type: 'text', text }],
        isError: true,
      })
      this.append('tool/result', {
        turn,
        step: stepNumber,
        message,
        error: { code: 'TOOL_NOT_STARTED', message: text },
      })
      return
    }
    this.append('tool/call', {
      turn,
      step: stepNumber,
      callId: CallId(id),
      name: 'read',
      arguments: JSON.stringify({ path: id }),
    })
    const message = createToolResultMessage({
      callId: CallId(id),
      content: [{ type: 'text', text: `${id} `.repeat(Math.ceil(spec.chars / (id.length + 1))) }],
      ...(spec.outcome === 'error' ? { isError: true } : {}),
    })
    this.append('tool/result', { turn, step: stepNumber, message })
  }

  async run(): Promise<void> {
    for (const spec of this.scenario.turns) {
      const turn = this.session.lastTurn() + 1
      this.append('user/message', userText(`prompt ${turn}`))
      this.append('turn/start', { turn, trigger: { kind: 'queued' } })
      if (this.session.requestHeader() === undefined) {
        this.append('request/header', {
          header: { config: { provider: 'p', model: 'm' } },
          reason: 'initial',
        })
      }
      let crashed = false
      for (const [index, stepSpec] of spec.steps.entries()) {
        const stepNumber = index + 1
        await this.compact(stepSpec.compactBefore, { turn, step: stepNumber })
        this.append('step/start', { turn, step: stepNumber })
        for (let k = 0; k < stepSpec.steer; k++)
          this.append('user/message', userText(`steer ${turn}.${stepNumber}.${k}`))
        await this.compact(stepSpec.compactInStep, { turn, step: stepNumber })
        const ids = this.modelCall(turn, stepNumber, stepSpec.calls)
        const last = index === spec.steps.length - 1
        const stopAt = last && spec.crashAfter !== undefined ? spec.crashAfter : ids.length
        ids.forEach((id, k) => {
          const callSpec = stepSpec.calls[k]
          if (k < stopAt && callSpec !== undefined) this.result(turn, stepNumber, id, callSpec)
        })
        if (last && spec.crashAfter !== undefined) {
          crashed = true
          break
        }
        this.append('step/end', { turn, step: stepNumber })
      }
      if (crashed) this.repair()
      else this.append('turn/end', { turn, reason: { kind: 'completed' } })
      await this.compact(spec.compactAfter)
      if (spec.crashedCompaction !== undefined) this.crashedPrune(spec.crashedCompaction)
      // One fork per scenario: a fork of a fork repeats its parent's session/end-seed, which the log
      // grammar refuses (a limit of dsh-session's fork, not of compaction).
      if (spec.fork !== undefined && this.session.parent === undefined) {
        const boundary = spec.fork % (this.session.seq + 1)
        try {
          this.session = await this.app.sessions.fork(this.session, boundary)
          this.sessions.push(this.session)
        } catch (error) {
          // A boundary inside a turn is refused; the scenario goes on in the same session.
          if ((error as { code?: string }).code !== 'INVALID_FORK') throw error
        }
      }
    }
  }
}

let app: Context
beforeAll(async () => {
  app = await createCheckedApp()
})

test('every derived request keeps each tool call paired with its result', { timeout: 120_000 }, async () => {
  let compactions = 0
  let requests = 0
  await fc.assert(
    fc.asyncProperty(scenario, async (spec) => {
      const builder = new Builder(app, spec, await app.sessions.create())
      await builder.run()
      for (const session of builder.sessions) {
        const events = session.events.slice()
        compactions += events.filter((event) => event.type === 'compaction/start').length
        const derived = reconstructRequests(events)
        requests += derived.length
        for (const request of derived) expect(adjacencyProblems(request.messages)).toEqual([])
        expect(adjacencyProblems(session.deriveMessages())).toEqual([])
        expect(checkSessionLog(events, { parent: session.parent ?? null })).toEqual([])
        await app.sessions.close(session)
      }
    }),
    { numRuns: 500 },
  )
  expect(compactions).toBeGreaterThan(500)
  expect(requests).toBeGreaterThan(2000)
})
