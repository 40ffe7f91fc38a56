/**
 * The `Compaction` plugin (`ctx.compaction`): compacts before a step whose request would cross the
 * threshold (`agent/pre-step`), after a context-window overflow (`agent/request-error`, then the step
 * is retried once), and on demand (`compact(agent)`).
 */
import { type Context, Service } from 'cordis'
import type {
  Agent,
  PreStepDecision,
  PreStepInput,
  RequestErrorDecision,
  RequestErrorInput,
} from 'dsh-agent-loop'
import { LlmErrorCode, type LlmRequest, type Message, type StreamChunk } from 'dsh-llm'
import type { Session } from 'dsh-session'
import { type CompactInput, compactSession } from './compact.ts'
import { ledgerOf } from './ledger.ts'
import { contextWindowFor, DEFAULT_CONTEXT_WINDOW } from './models.ts'
import { contextPressure } from './pressure.ts'
import { type CompactionSettings, resolveSettings } from './settings.ts'
import { TokenEstimator } from './tokens.ts'
import type { CompactionConfig, CompactionResult, CompactionStrategy, ContextPressure } from './types.ts'

declare module 'cordis' {
  interface Context {
    compaction: Compaction
  }
}

/** A compaction asked for while the agent runs, done at its next pre-step. */
interface Request {
  readonly strategy: CompactionStrategy | 'auto'
  readonly settle: (result: Promise<CompactionResult>) => void
}

/**
 * The compaction service. Mount after `AgentLoop`: `await app.plugin(Compaction, {threshold: 0.8})`.
 * Its listeners are effects of the mounting fiber.
 */
export class Compaction extends Service {
  static inject = ['llm', 'sessions', 'agentLoop']

  /** The configuration as given. */
  readonly config: CompactionConfig
  /** The estimator used for everything the provider has not counted. */
  readonly estimator: TokenEstimator
  private readonly home: Context
  private readonly requests = new Map<Agent, Request[]>()
  /** `agent:turn` pairs whose automatic compaction did not help: no second try in that turn. */
  private readonly gaveUp = new Set<string>()
  /** `agent:turn:step` steps already compacted after an overflow: a second overflow fails the turn. */
  private readonly overflowed = new Set<string>()

  constructor(ctx: Context, config: CompactionConfig = {}) {
    super(ctx, 'compaction')
    this.home = ctx
    this.config = config
    this.estimator = new TokenEstimator(config.countTokens)
    resolveSettings(config, config.defaultContextWindow ?? DEFAULT_CONTEXT_WINDOW)
    ctx.on('agent/pre-step', (input, next) => this.preStep(input, next))
    ctx.on('agent/request-error', (input, next) => this.requestError(input, next))
  }

  /** The context window of `model` (the configured table over `KNOWN_CONTEXT_WINDOWS`). */
  windowFor(model: string): number {
    return contextWindowFor(model, this.config.contextWindows, this.config.defaultContextWindow)
  }

  /** The settings for the model of `session`'s latest request header (the default window before one). */
  settingsFor(session: Session): CompactionSettings {
    const model = session.requestHeader()?.header.config.model
    const window =
      model === undefined
        ? (this.config.defaultContextWindow ?? DEFAULT_CONTEXT_WINDOW)
        : this.windowFor(model)
    return resolveSettings(this.config, window)
  }

  /**
   * How full the next request of `target` (an agent or a session) is: tokens, window and ratio
   * ("context 72% full" is `Math.round(ratio * 100)`). `pending` adds messages about to enter.
   */
  pressure(target: Agent | Session, pending: readonly Message[] = []): ContextPressure {
    const session = 'session' in target ? target.session : target
    return contextPressure(session, this.settingsFor(session).window, this.estimator, pending)
  }

  /** How many compactions the log of `target` records (started, whatever their outcome). */
  compactions(target: Agent | Session): number {
    return ledgerOf('session' in target ? target.session : target).started
  }

  /**
   * Compacts `agent`'s session now when it is idle, else at the running turn's next pre-step.
   * `strategy` forces pruning or a summary (default `auto`). Resolves with what happened (when the
   * turn ends before another pre-step, the compaction runs once the agent is idle); rejects like
   * `compactSession` (an open or running compaction).
   */
  compact(
    agent: Agent,
    options: { readonly strategy?: CompactionStrategy | 'auto' } = {},
  ): Promise<CompactionResult> {
    const strategy = options.strategy ?? 'auto'
    if (agent.status === 'idle') return compactSession(this.input(agent.session, 'manual', strategy))
    return new Promise<CompactionResult>((resolve, reject) => {
      const queue = this.requests.get(agent) ?? []
      queue.push({ strategy, settle: (result) => result.then(resolve, reject) })
      this.requests.set(agent, queue)
      void agent.whenIdle().then(() => {
        // The turn ended before a pre-step took the request: compact now, between turns.
        const left = this.requests.get(agent)
        if (left === undefined) return
        this.requests.delete(agent)
        for (const request of left)
          request.settle(compactSession(this.input(agent.session, 'manual', request.strategy)))
      })
    })
  }

  private input(
    session: Session,
    trigger: CompactInput['trigger'],
    strategy: CompactionStrategy | 'auto',
    extra: Partial<Pick<CompactInput, 'pending' | 'signal' | 'position'>> = {},
  ): CompactInput {
    const settings = this.settingsFor(session)
    const adapter = settings.summarizer.adapter
    const stream = (request: LlmRequest): AsyncIterable<StreamChunk> =>
      adapter === undefined ? this.home.llm.stream(request) : adapter.stream(request)
    return { session, trigger, settings, estimator: this.estimator, stream, strategy, ...extra }
  }

  private async preStep(input: PreStepInput, next: () => Promise<PreStepDecision>): Promise<PreStepDecision> {
    const decision = await next()
    if (decision.kind !== 'enter') return decision
    const { agent, turn, step, signal } = input
    const extra = { pending: decision.messages, signal, position: { turn, step } }
    const queued = this.requests.get(agent)
    if (queued !== undefined) {
      this.requests.delete(agent)
      for (const request of queued) {
        const result = compactSession(this.input(agent.session, 'manual', request.strategy, extra))
        request.settle(result)
        await result.catch(() => undefined)
      }
      return decision
    }
    if (this.config.auto === false || this.gaveUp.has(`${agent.id}:${turn}`)) return decision
    const session = agent.session
    if (session.requestHeader() === undefined) return decision
    const settings = this.settingsFor(session)
    const pressure = contextPressure(session, settings.window, this.estimator, decision.messages)
    if (pressure.ratio < settings.threshold) return decision
    const result = await compactSession(this.input(session, 'threshold', 'auto', extra))
    if (result.kind !== 'completed' || result.tokensAfter / settings.window >= settings.threshold) {
      this.gaveUp.add(`${agent.id}:${turn}`)
    }
    return decision
  }

  private async requestError(
    input: RequestErrorInput,
    next: () => Promise<RequestErrorDecision>,
  ): Promise<RequestErrorDecision> {
    if (input.failure.code !== LlmErrorCode.CONTEXT_WINDOW_EXCEEDED || this.config.auto === false)
      return next()
    const { agent, turn, step, signal } = input
    const key = `${agent.id}:${turn}:${step}`
    if (this.overflowed.has(key)) {
      this.home
        .logger('dsh-compaction')
        .warn(
          `session ${agent.session.id} turn ${turn} step ${step}: the request overflowed the context window again after a compaction; the turn ends with CONTEXT_WINDOW_EXCEEDED`,
        )
      return { kind: 'fail' }
    }
    this.overflowed.add(key)
    const result = await compactSession(
      this.input(agent.session, 'overflow', 'auto', { signal, position: { turn, step } }),
    )
    return result.kind === 'completed' ? { kind: 'retry', delayMs: 0 } : { kind: 'fail' }
  }
}
