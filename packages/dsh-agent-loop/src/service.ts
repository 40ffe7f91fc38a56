/** `ctx.agentLoop`: creates and resumes agents, and owns the standard `inbox` projection. */
import { type Context, Service } from 'cordis'
import { emitContained, type RetryPolicy, resolveRetryPolicy, type SessionId, untraced } from 'dsh-llm'
import type { InboxState, Session, Sessions } from 'dsh-session'
import { LoopAgent } from './agent.ts'
import { AgentLoopError, AgentLoopErrorCode } from './errors.ts'
import { INBOX_PROJECTION, inboxProjection } from './inbox/inbox.ts'
import { checkCallOptions } from './model/call-options.ts'
import type { Agent, AgentLoopConfig, AgentOptions, ResumeOptions } from './types.ts'

declare module 'cordis' {
  interface Context {
    agentLoop: AgentLoopService
  }
}

const DEFAULT_TOOL_CONCURRENCY = 8
const DEFAULT_TOOL_TIMEOUT_MS = 300_000
const DEFAULT_ABORT_GRACE_MS = 2_000

function invalid(message: string): AgentLoopError {
  return new AgentLoopError(AgentLoopErrorCode.INVALID_OPTIONS, message)
}

function checkOptions(where: string, options: ResumeOptions): void {
  if (options === null || typeof options !== 'object') throw invalid(`${where}: options must be an object`)
  if (typeof options.provider !== 'string' || options.provider === '') {
    throw invalid(`${where}: provider must be a non-empty string, got ${JSON.stringify(options.provider)}`)
  }
  if (typeof options.model !== 'string' || options.model === '') {
    throw invalid(`${where}: model must be a non-empty string, got ${JSON.stringify(options.model)}`)
  }
  const { maxSteps, tools, system } = options
  if (maxSteps !== undefined && maxSteps !== Infinity && (!Number.isSafeInteger(maxSteps) || maxSteps < 1)) {
    throw invalid(`${where}: maxSteps must be an integer >= 1, got ${JSON.stringify(maxSteps)}`)
  }
  if (tools !== undefined && (!Array.isArray(tools) || !tools.every((name) => typeof name === 'string'))) {
    throw invalid(`${where}: tools must be an array of tool names`)
  }
  if (system !== undefined && typeof system !== 'string') {
    throw invalid(`${where}: system must be a string`)
  }
  checkCallOptions(where, options)
}

const REQUIRED = [
  ['llm', 'LlmRuntime'],
  ['sessions', 'Sessions'],
  ['sessionProjections', 'Sessions'],
  ['tools', 'ToolRegistry'],
] as const

/** Throws `MISSING_PLUGIN` naming the first service the agent loop needs that `ctx` lacks. */
function requirePlugins(ctx: Context): void {
  for (const [service, plugin] of REQUIRED) {
    if (ctx.reflect.get(service, false) !== undefined) continue
    throw new AgentLoopError(
      AgentLoopErrorCode.MISSING_PLUGIN,
      `AgentLoop needs ctx.${service}, which the ${plugin} plugin provides: await app.plugin(${plugin}) before app.plugin(AgentLoop)`,
    )
  }
}

/** Throws `UNKNOWN_PROVIDER` when no adapter is registered for `provider`. */
function requireProvider(where: string, ctx: Context, provider: string): void {
  const registered = ctx.llm.providers()
  if (registered.includes(provider)) return
  const names = registered.length === 0 ? 'none' : registered.map((name) => JSON.stringify(name)).join(', ')
  throw new AgentLoopError(
    AgentLoopErrorCode.UNKNOWN_PROVIDER,
    `${where}: no adapter is registered for provider ${JSON.stringify(provider)} (registered: ${names}); call app.llm.registerAdapter(${JSON.stringify(provider)}, adapter) first`,
  )
}

/**
 * Called by a disposing agent once it is quiet: forgets it and closes its session when it owns it,
 * else flushes it. An object, not a function: read through the service's tracing proxy (as `this`
 * in `start` is), a function would come back wrapped, one wrapper per agent.
 */
class AgentReleaser {
  constructor(
    private readonly agents: Map<SessionId, LoopAgent>,
    private readonly sessions: Sessions,
  ) {}

  async release(agent: LoopAgent, owned: boolean): Promise<void> {
    const { session } = agent
    if (this.agents.get(session.id) === agent) this.agents.delete(session.id)
    if (owned) await this.sessions.close(session)
    else await session.flush()
  }
}

/** The resolved default policy, shared by every agent created without `retry` (it is frozen and stateless). */
let defaultPolicy: RetryPolicy | undefined

/** The agent's retry policy: the shared default without `options.retry`, else its own (checked here). */
function retryPolicyOf(options: ResumeOptions): RetryPolicy {
  // `?? {}` as before: a null `retry` (from untyped callers) means the default too.
  const retry = options.retry ?? undefined
  if (retry !== undefined) return resolveRetryPolicy(retry)
  defaultPolicy ??= resolveRetryPolicy({})
  return defaultPolicy
}

/**
 * The agent loop service (`ctx.agentLoop`). Registers the standard `inbox` projection on
 * `ctx.sessionProjections` for its lifetime, and disposes its agents when it unloads.
 * At most one live agent drives a session.
 */
export class AgentLoopService extends Service {
  static inject = ['llm', 'sessions', 'sessionProjections', 'tools']

  private readonly home: Context
  private readonly agents = new Map<SessionId, LoopAgent>()
  private readonly maxToolConcurrency: number
  private readonly toolTimeoutMs: number
  private readonly abortGraceMs: number
  /** Releases disposing agents; one for every agent of this service (an agent keeps no closure). */
  private readonly releaser: AgentReleaser

  constructor(ctx: Context, config: AgentLoopConfig = {}) {
    super(ctx, 'agentLoop')
    const cap = config.maxToolConcurrency ?? DEFAULT_TOOL_CONCURRENCY
    if (!Number.isSafeInteger(cap) || cap < 1) {
      throw invalid(`AgentLoop: maxToolConcurrency must be an integer >= 1, got ${JSON.stringify(cap)}`)
    }
    const toolTimeoutMs = config.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS
    if (typeof toolTimeoutMs !== 'number' || Number.isNaN(toolTimeoutMs) || toolTimeoutMs <= 0) {
      throw invalid(
        `AgentLoop: toolTimeoutMs must be a number > 0 (Infinity for none), got ${String(toolTimeoutMs)}`,
      )
    }
    const abortGraceMs = config.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS
    if (typeof abortGraceMs !== 'number' || !Number.isFinite(abortGraceMs) || abortGraceMs < 0) {
      throw invalid(`AgentLoop: abortGraceMs must be a finite number >= 0, got ${String(abortGraceMs)}`)
    }
    this.home = ctx
    this.maxToolConcurrency = cap
    this.toolTimeoutMs = toolTimeoutMs
    this.abortGraceMs = abortGraceMs
    ctx.sessionProjections.register(inboxProjection)
    const agents = this.agents
    // The store itself, not cordis's tracing proxy (whose shadow context would be kept with it).
    this.releaser = new AgentReleaser(agents, untraced(ctx.sessions))
    ctx.effect(
      () => () => Promise.all([...agents.values()].map((agent) => agent.dispose())).then(() => undefined),
      'agentLoop agents',
    )
  }

  /**
   * Creates an agent over `options.session` (a live session the caller keeps owning), or over a new
   * session (with `options.sessionId`, or a fresh id) that the agent closes on `dispose`. Emits
   * `agent/created`. Rejects with `INVALID_OPTIONS` (bad options, retry policy included),
   * `UNKNOWN_PROVIDER` (no adapter registered for `options.provider`) or
   * `SESSION_BUSY` (another live agent drives the session, or it has an open turn).
   */
  async create(options: AgentOptions): Promise<Agent> {
    checkOptions('agentLoop.create', options)
    requireProvider('agentLoop.create', this.home, options.provider)
    const policy = retryPolicyOf(options)
    if (options.session !== undefined) {
      return this.start(options.session, false, options, policy)
    }
    const session = await this.home.sessions.create(
      options.sessionId === undefined ? {} : { id: options.sessionId },
    )
    return this.start(session, true, options, policy)
  }

  /**
   * Builds a new loop instance over the stored session `sessionId` (or the live one, if this
   * process has it open): `ctx.sessions.open` repairs an interrupted tail first; turn numbering
   * continues; the first request records a `resume` header; pending inbox messages are restored but
   * wait for a wake. Rejects like `create`, and with the store's errors (`NOT_FOUND`, `LOCKED`, ...).
   */
  async resume(sessionId: SessionId, options: ResumeOptions): Promise<Agent> {
    checkOptions('agentLoop.resume', options)
    requireProvider('agentLoop.resume', this.home, options.provider)
    const policy = retryPolicyOf(options)
    const live = this.home.sessions.get(sessionId)
    if (live !== undefined) return this.start(live, false, options, policy)
    const session = await this.home.sessions.open(sessionId)
    return this.start(session, true, options, policy)
  }

  /** The inbox of `session`, folded from its log: readable with no agent alive. Frozen. */
  inbox(session: Session): InboxState {
    return this.home.sessionProjections.get<InboxState>(session, INBOX_PROJECTION)
  }

  /** The live agent driving `sessionId`, if any. */
  agentFor(sessionId: SessionId): Agent | undefined {
    return this.agents.get(sessionId)
  }

  private start(session: Session, owned: boolean, options: ResumeOptions, policy: RetryPolicy): Agent {
    const busy = this.agents.get(session.id)
    if (busy !== undefined) {
      throw new AgentLoopError(
        AgentLoopErrorCode.SESSION_BUSY,
        `session ${session.id} is already driven by agent ${busy.id}`,
      )
    }
    const open = session.openTurn()
    if (open !== undefined) {
      throw new AgentLoopError(
        AgentLoopErrorCode.SESSION_BUSY,
        `session ${session.id} has turn ${open.turn} open`,
      )
    }
    const { session: _session, sessionId: _sessionId, ...agentOptions } = options as AgentOptions
    const agent = new LoopAgent({
      ctx: this.home,
      session,
      options: agentOptions,
      policy,
      maxToolConcurrency: this.maxToolConcurrency,
      toolTimeoutMs: this.toolTimeoutMs,
      abortGraceMs: this.abortGraceMs,
      owned,
      releaser: this.releaser,
    })
    this.agents.set(session.id, agent)
    emitContained(this.home, 'agent/created', [agent])
    return agent
  }
}

/**
 * The AgentLoop plugin: `await app.plugin(AgentLoop, config?)` provides `ctx.agentLoop`. Mount
 * `LlmRuntime`, `Sessions` and `ToolRegistry` first: mounting it without one of them rejects with
 * `AgentLoopError` `MISSING_PLUGIN` naming the plugin (cordis alone would leave it pending in
 * silence, and `app.agentLoop` undefined). Unloading any of them unloads the agent loop too.
 */
export const AgentLoop = {
  name: 'AgentLoop',
  async apply(ctx: Context, config: AgentLoopConfig = {}): Promise<void> {
    requirePlugins(ctx)
    // Awaited so that `await app.plugin(AgentLoop)` resolves once `ctx.agentLoop` is there.
    await ctx.plugin(AgentLoopService, config)
  },
}

/** The agent loop service, as `ctx.agentLoop`. */
export type AgentLoop = AgentLoopService
