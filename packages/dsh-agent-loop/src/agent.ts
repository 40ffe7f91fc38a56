/**
 * The agent: a loop instance over one session. It owns the turn driver (one turn at a time, then
 * the queue), the outbox, cancellation and the agent's lifecycle.
 */
import { randomUUID } from 'node:crypto'
import type { Context } from 'cordis'
import {
  type EventBus,
  eventBus,
  HarnessError,
  llmFailure,
  type Message,
  type RetryPolicy,
  type TurnTrigger,
  type UserMessage,
  untraced,
} from 'dsh-llm'
import type { Session } from 'dsh-session'
import { TurnCancellation } from './cancel.ts'
import { AgentLoopError, AgentLoopErrorCode, describeError } from './errors.ts'
import { ReactLoopInbox } from './inbox.ts'
import { checkUserMessage } from './message-check.ts'
import { Outbox } from './outbox.ts'
import { composeSessionPrefix } from './prefix.ts'
import type { ModelCallEnv } from './step.ts'
import type { ToolBatchEnv } from './tool-exec.ts'
import { runTurn, type TurnHost } from './turn.ts'
import type { Agent, AgentOptions, AgentStatus, CancelOptions, SendOptions } from './types.ts'

/** What the AgentLoop service gives each agent it creates. */
export interface AgentSetup {
  readonly ctx: Context
  readonly session: Session
  readonly options: AgentOptions
  readonly policy: RetryPolicy
  readonly maxToolConcurrency: number
  readonly toolTimeoutMs: number
  readonly abortGraceMs: number
  /** Called once the agent has quiesced during `dispose`; closes the session when the agent owns it. */
  readonly release: (agent: LoopAgent) => Promise<void>
}

const EMPTY_PREFIX: readonly Message[] = Object.freeze([])

interface OpenTurn {
  readonly turn: number
  readonly batch: readonly UserMessage[]
  readonly cancellation: TurnCancellation
}

/** The agent implementation. Construct through `ctx.agentLoop.create` / `resume`. */
export class LoopAgent implements Agent {
  readonly id = `agent_${randomUUID()}`
  readonly session: Session
  readonly inbox: ReactLoopInbox
  private currentStatus: AgentStatus = 'idle'
  private disposing: Promise<void> | undefined
  private readonly outbox = new Outbox()
  private readonly host: TurnHost
  /** The open turn's cancellation, from `turn/start` until `turn/end` is appended. */
  private cancellation: TurnCancellation | undefined
  /** A waking send or steer arrived while running (since the last turn start or cancel). */
  private wakeRequested = false
  private driver: Promise<void> | undefined
  private readonly flushes = new Set<Promise<void>>()
  private prefix: readonly Message[] | undefined
  private readonly bus: EventBus

  constructor(private readonly setup: AgentSetup) {
    const { ctx, session, options } = setup
    // Resolved once: every access through the cordis context costs a tracing proxy.
    const bus = eventBus(ctx)
    const llm = untraced(ctx.llm)
    const toolRegistry = untraced(ctx.tools)
    this.bus = bus
    this.session = session
    this.inbox = new ReactLoopInbox(untraced(ctx.sessionProjections), session, {
      inserted: (message) => bus.emit('agent/inbox/inserted', [this, { message }]),
      discarded: (message) => bus.emit('agent/inbox/discarded', [this, { message }]),
      claimed: (message, turn) => bus.emit('agent/inbox/claimed', [this, { message, turn }]),
    })
    const currentPrefix = (): readonly Message[] => this.prefix ?? EMPTY_PREFIX
    const model: ModelCallEnv = {
      bus,
      llm,
      tools: toolRegistry,
      session,
      options,
      policy: setup.policy,
      get prefix() {
        return currentPrefix()
      },
      firstRequest: true,
      headerMemo: undefined,
      callIds: undefined,
      warn: (warning) => bus.emit('agent/warning', [this, warning]),
    }
    const tools: ToolBatchEnv = {
      bus,
      session,
      outbox: this.outbox,
      // `select(options.tools)` narrowed to one name, without building the list for every call.
      offered: (name) =>
        options.tools === undefined || options.tools.includes(name) ? toolRegistry.get(name) : undefined,
      maxConcurrency: setup.maxToolConcurrency,
      toolTimeoutMs: setup.toolTimeoutMs,
      abortGraceMs: setup.abortGraceMs,
    }
    this.host = {
      bus,
      agent: this,
      session,
      inbox: this.inbox,
      outbox: this.outbox,
      model,
      tools,
      maxSteps: options.maxSteps,
      sessionPrefix: (signal) => this.sessionPrefix(signal),
      report: (error) => this.report(error),
      turnClosed: () => {
        this.cancellation = undefined
      },
    }
  }

  get status(): AgentStatus {
    return this.currentStatus
  }

  get disposed(): boolean {
    return this.disposing !== undefined
  }

  send(message: UserMessage, options: SendOptions = {}): void {
    this.assertAlive('send')
    const checked = checkUserMessage('Agent.send', message)
    const target = options.target ?? 'next-turn'
    this.inbox.append(target, checked)
    if (options.wakeup === false) return
    this.wake({ kind: 'send', target })
  }

  steer(message: UserMessage): void {
    this.send(message, { target: 'next-step', wakeup: true })
  }

  inject(message: UserMessage): void {
    this.assertAlive('inject')
    const checked = checkUserMessage('Agent.inject', message)
    if (this.cancellation !== undefined) {
      this.outbox.push(checked)
      return
    }
    this.session.append('user/message', checked)
    this.trackFlush()
  }

  cancel(cause = 'cancelled', options: CancelOptions = {}): void {
    const cancellation = this.cancellation
    if (cancellation === undefined) return
    this.wakeRequested = false
    // The inbox is cleared before the signal aborts: a `send()` from an abort listener is new work
    // for the next turn, not part of what this cancel discards.
    if (options.keepInbox !== true) this.inbox.clear()
    cancellation.cancel(cause)
  }

  async whenIdle(): Promise<void> {
    while (true) {
      if (this.driver !== undefined) {
        await this.driver
        continue
      }
      if (this.flushes.size > 0) {
        await Promise.all(this.flushes)
        continue
      }
      return
    }
  }

  dispose(): Promise<void> {
    this.disposing ??= this.shutdown()
    return this.disposing
  }

  private async shutdown(): Promise<void> {
    this.cancel('disposed', { keepInbox: true })
    await this.whenIdle()
    try {
      await this.setup.release(this)
    } catch (error) {
      this.report(
        error instanceof HarnessError
          ? error
          : new AgentLoopError(
              AgentLoopErrorCode.LOOP_FAILED,
              `releasing session ${this.session.id} failed: ${describeError(error)}`,
              { cause: error },
            ),
      )
    }
    this.bus.emit('agent/disposed', [this])
  }

  private assertAlive(operation: string): void {
    if (this.disposing !== undefined) {
      throw new AgentLoopError(
        AgentLoopErrorCode.AGENT_DISPOSED,
        `Agent.${operation}: agent ${this.id} is disposed`,
      )
    }
  }

  private wake(trigger: TurnTrigger): void {
    if (this.currentStatus === 'running') {
      this.wakeRequested = true
      return
    }
    // The turn's cancellation exists before `running` is announced, so a `cancel()` from an
    // `agent/status` listener cancels the turn about to open instead of being a no-op.
    const cancellation = new TurnCancellation()
    this.cancellation = cancellation
    this.setStatus('running')
    let first: OpenTurn
    try {
      first = this.openTurn(trigger, cancellation)
    } catch (error) {
      this.setStatus('idle')
      throw error
    }
    this.driver = this.drive(first)
  }

  /**
   * Synchronously appends `turn/start` and claims the turn's first batch. If the claim is refused,
   * the turn is closed `error` before the error is rethrown, so the log stays balanced.
   */
  private openTurn(trigger: TurnTrigger, cancellation = new TurnCancellation()): OpenTurn {
    this.cancellation = cancellation
    const turn = this.session.lastTurn() + 1
    try {
      this.session.append('turn/start', { turn, trigger })
    } catch (error) {
      this.cancellation = undefined
      throw error
    }
    this.wakeRequested = false
    try {
      return { turn, cancellation, batch: this.inbox.claim(turn, true) }
    } catch (error) {
      this.cancellation = undefined
      const failure = llmFailure(
        AgentLoopErrorCode.LOOP_FAILED,
        `claiming the inbox failed: ${describeError(error)}`,
      )
      this.session.append('turn/end', { turn, reason: { kind: 'error', failure } })
      throw error
    }
  }

  private async drive(first: OpenTurn): Promise<void> {
    let current: OpenTurn | undefined = first
    try {
      while (current !== undefined) {
        await runTurn(this.host, current.turn, current.batch, current.cancellation)
        const aborted = current.cancellation.cause !== undefined
        if (this.outbox.size > 0) this.drainLateContext()
        current = this.nextQueuedTurn(aborted)
      }
    } catch (error) {
      this.cancellation = undefined
      this.report(
        new AgentLoopError(
          AgentLoopErrorCode.LOOP_FAILED,
          `agent ${this.id} stopped: ${describeError(error)}`,
          {
            cause: error,
          },
        ),
      )
    } finally {
      this.driver = undefined
      this.setStatus('idle')
    }
  }

  /** The next turn after one closed: queued work runs unless the closed turn was cancelled without a later wake. */
  private nextQueuedTurn(aborted: boolean): OpenTurn | undefined {
    const woken = this.wakeRequested
    this.wakeRequested = false
    if (this.disposing !== undefined || !this.inbox.hasPending()) return undefined
    if (aborted && !woken) return undefined
    return this.openTurn({ kind: 'queued' })
  }

  /** Context staged after the last drain of a turn (by a `turn/end` listener) is appended between turns. */
  private drainLateContext(): void {
    this.outbox.drain(this.session)
    this.trackFlush()
  }

  private trackFlush(): void {
    const flush = this.session.flush().catch((error: unknown) => {
      this.report(
        new AgentLoopError(
          AgentLoopErrorCode.LOOP_FAILED,
          `flushing session ${this.session.id} failed: ${describeError(error)}`,
          {
            cause: error,
          },
        ),
      )
    })
    this.flushes.add(flush)
    void flush.finally(() => this.flushes.delete(flush))
  }

  private sessionPrefix(signal: AbortSignal): readonly Message[] | Promise<readonly Message[]> {
    return this.prefix ?? this.composePrefix(signal)
  }

  private async composePrefix(signal: AbortSignal): Promise<readonly Message[]> {
    const composed = await composeSessionPrefix(this.bus, this, signal)
    if (signal.aborted) throw signal.reason
    this.prefix = composed
    return composed
  }

  private setStatus(status: AgentStatus): void {
    if (this.currentStatus === status) return
    this.currentStatus = status
    this.bus.emit('agent/status', [this, status])
  }

  private report(error: HarnessError): void {
    this.bus.emit('agent/error', [this, error])
  }
}
