/**
 * The agent: a loop instance over one session — its public face (send, prompt, stream, steer,
 * inject, cancel), its outbox and its lifecycle. Turns are run by its `TurnDriver`.
 */
import { randomUUID } from 'node:crypto'
import type { Context } from 'cordis'
import {
  type EventBus,
  eventBus,
  HarnessError,
  type RetryPolicy,
  redact,
  type TurnTrigger,
  type UserMessage,
  untraced,
  userText,
} from 'dsh-llm'
import type { Session, SessionEvent } from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode, describeError } from './errors.ts'
import { type InboxNotifier, ReactLoopInbox } from './inbox/inbox.ts'
import { checkUserMessage } from './inbox/message-check.ts'
import { Outbox } from './inbox/outbox.ts'
import { LoopModelEnv } from './model-env.ts'
import type { ToolBatchEnv } from './tools/batch.ts'
import { type DriverHost, TurnDriver } from './turn/driver.ts'
import { Prompts } from './turn/prompts.ts'
import type { TurnResult } from './turn/result.ts'
import { type TurnStream, turnStream } from './turn/stream.ts'
import type { Agent, AgentOptions, AgentStatus, CancelOptions, SendOptions } from './types.ts'

/** The step limit of a turn when `maxSteps` is not given. */
export const DEFAULT_MAX_STEPS = 50

/** What the AgentLoop service gives each agent it creates. */
export interface AgentSetup {
  readonly ctx: Context
  readonly session: Session
  readonly options: AgentOptions
  readonly policy: RetryPolicy
  readonly maxToolConcurrency: number
  readonly toolTimeoutMs: number
  readonly abortGraceMs: number
  /** Whether the agent owns its session (created or opened it for the agent): `release` closes it. */
  readonly owned: boolean
  /**
   * Its `release` is called once the agent has quiesced during `dispose`, with `owned`: closes the
   * session when the agent owns it. One releaser for every agent, so no agent keeps a closure.
   */
  readonly releaser: { release(agent: LoopAgent, owned: boolean): Promise<void> }
}

/** The agent implementation. Construct through `ctx.agentLoop.create` / `resume`. */
export class LoopAgent implements Agent, DriverHost, InboxNotifier {
  /**
   * A flat copy of the string: `randomUUID` builds its text as a rope of about 16 pieces (~510 bytes
   * held per agent); the JSON round trip gives one sequential string (~65).
   */
  readonly id: string = JSON.parse(JSON.stringify(`agent_${randomUUID()}`)) as string
  readonly session: Session
  readonly inbox: ReactLoopInbox
  private currentStatus: AgentStatus = 'idle'
  private disposal: Promise<void> | undefined
  private readonly outbox = new Outbox()
  private readonly driver: TurnDriver
  /** Flushes started between turns (`inject`, late context), made on the first one. */
  private flushes: Set<Promise<void>> | undefined
  private readonly bus: EventBus
  readonly prompts: Prompts

  /** The context agents were created in (for `stream`'s listeners). */
  private readonly ctx: Context
  private readonly owned: boolean
  private readonly releaser: AgentSetup['releaser']

  constructor(setup: AgentSetup) {
    const { ctx, session, options } = setup
    // The fields kept from `setup`, not the object itself (nor anything else it carries).
    this.ctx = ctx
    this.owned = setup.owned
    this.releaser = setup.releaser
    // Resolved once: every access through the cordis context costs a tracing proxy.
    const bus = eventBus(ctx)
    const toolRegistry = untraced(ctx.tools)
    this.bus = bus
    this.session = session
    this.prompts = new Prompts(session)
    // The agent itself is the inbox's notifier and the driver's host: no closures kept per agent.
    this.inbox = new ReactLoopInbox(untraced(ctx.sessionProjections), session, this)
    const tools: ToolBatchEnv = {
      bus,
      session,
      outbox: this.outbox,
      registry: toolRegistry,
      toolNames: options.tools,
      maxConcurrency: setup.maxToolConcurrency,
      toolTimeoutMs: setup.toolTimeoutMs,
      abortGraceMs: setup.abortGraceMs,
    }
    this.driver = new TurnDriver(this, {
      bus,
      session,
      inbox: this.inbox,
      outbox: this.outbox,
      model: new LoopModelEnv(this, session, options, bus, untraced(ctx.llm), toolRegistry, setup.policy),
      tools,
      // Infinity (explicitly asked for) never stops a turn.
      maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
    })
  }

  /** The agent's id (the driver's host names it in errors). */
  get agentId(): string {
    return this.id
  }

  get status(): AgentStatus {
    return this.currentStatus
  }

  get disposed(): boolean {
    return this.disposal !== undefined
  }

  send(message: UserMessage, options: SendOptions = {}): void {
    this.assertAlive('send')
    const checked = checkUserMessage('Agent.send', message)
    const target = options.target ?? 'next-turn'
    this.inbox.append(target, checked)
    if (options.wakeup === false) return
    this.wake({ kind: 'send', target })
  }

  prompt(input: string | UserMessage): Promise<TurnResult> {
    try {
      return this.promptTurn(input).promise
    } catch (error) {
      return Promise.reject(error)
    }
  }

  stream(input: string | UserMessage): TurnStream {
    const sessionId = this.session.id
    // Listening starts before the send: its insert, `turn/start` and claim are committed inside it.
    const early: SessionEvent[] = []
    let forward = (event: SessionEvent): void => {
      early.push(event)
    }
    const disposeEvents = this.ctx.on('session/event', (session, event) => {
      if (session.id === sessionId) forward(event)
    })
    // Chunks come on their own channel, in log order with the events; the stream yields them built.
    const disposeChunks = this.ctx.on('session/chunk', (session, seq) => {
      if (session.id === sessionId) forward(session.eventAt(seq) as SessionEvent)
    })
    const dispose = () => {
      disposeEvents()
      disposeChunks()
    }
    let tracked: ReturnType<LoopAgent['promptTurn']> | undefined
    let result: Promise<TurnResult>
    try {
      tracked = this.promptTurn(input)
      result = tracked.promise
    } catch (error) {
      result = Promise.reject(error)
    }
    const found = tracked
    return turnStream({
      subscribe: (listener) => {
        for (const event of early) listener(event)
        early.length = 0
        forward = listener
        return () => {
          dispose()
        }
      },
      turn: () => found?.turn(),
      result,
    })
  }

  /** Sends `input` as a next-turn message with a prompt waiting for the turn that claims it. */
  private promptTurn(input: string | UserMessage): ReturnType<Prompts['track']> {
    this.assertAlive('prompt')
    const message = typeof input === 'string' ? userText(input) : input
    const tracked = this.prompts.track(message.id)
    try {
      this.send(message)
    } catch (error) {
      this.prompts.refuse(message.id, error instanceof Error ? error : new Error(describeError(error)))
      throw error
    }
    return tracked
  }

  steer(message: UserMessage): void {
    this.send(message, { target: 'next-step', wakeup: true })
  }

  inject(message: UserMessage): void {
    this.assertAlive('inject')
    const checked = checkUserMessage('Agent.inject', message)
    if (this.driver.turnIsOpen) {
      this.outbox.push(checked)
      return
    }
    this.session.append('user/message', checked)
    this.trackFlush()
  }

  cancel(cause = 'cancelled', options: CancelOptions = {}): void {
    this.driver.cancel(cause, () => {
      if (options.keepInbox !== true) this.inbox.clear()
    })
  }

  async whenIdle(): Promise<void> {
    while (true) {
      const turns = this.driver.whenDone
      if (turns !== undefined) {
        await turns
        continue
      }
      if (this.flushes !== undefined && this.flushes.size > 0) {
        await Promise.all(this.flushes)
        continue
      }
      return
    }
  }

  dispose(): Promise<void> {
    this.disposal ??= this.shutdown()
    return this.disposal
  }

  private async shutdown(): Promise<void> {
    this.cancel('disposed', { keepInbox: true })
    await this.whenIdle()
    this.prompts.abandon(
      new AgentLoopError(
        AgentLoopErrorCode.AGENT_DISPOSED,
        `agent ${this.id} was disposed before the prompted turn ran (session ${this.session.id})`,
      ),
    )
    try {
      await this.releaser.release(this, this.owned)
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
    if (this.disposal !== undefined) {
      throw new AgentLoopError(
        AgentLoopErrorCode.AGENT_DISPOSED,
        `Agent.${operation}: agent ${this.id} is disposed`,
      )
    }
  }

  private wake(trigger: TurnTrigger): void {
    this.driver.wake(trigger, this.currentStatus)
  }

  /** Driver host: true once the agent is disposing. */
  disposing(): boolean {
    return this.disposal !== undefined
  }

  /** Inbox notifier: announces `agent/inbox/inserted`. */
  inserted(message: UserMessage): void {
    this.bus.emit('agent/inbox/inserted', [this, { message }])
  }

  /** Inbox notifier: announces `agent/inbox/discarded` and settles a prompt waiting on the message. */
  discarded(message: UserMessage): void {
    this.bus.emit('agent/inbox/discarded', [this, { message }])
    this.prompts.discarded(message.id)
  }

  /** Inbox notifier: ties a prompt to the turn that claimed its message, then announces the claim. */
  claimed(message: UserMessage, turn: number): void {
    this.prompts.claimed(message.id, turn)
    this.bus.emit('agent/inbox/claimed', [this, { message, turn }])
  }

  /** Driver host: context staged after the last drain of a turn (by a `turn/end` listener) is appended between turns. */
  drainLateContext(): void {
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
    this.flushes ??= new Set()
    const flushes = this.flushes
    flushes.add(flush)
    void flush.finally(() => flushes.delete(flush))
  }

  /** Driver host: announces a status change on `agent/status`. */
  setStatus(status: AgentStatus): void {
    if (this.currentStatus === status) return
    this.currentStatus = status
    this.bus.emit('agent/status', [this, status])
  }

  /**
   * Emits `agent/error`. An error nobody listens to is not swallowed: it becomes the cause of the
   * prompt waiting for the open turn, or else one line on stderr.
   */
  report(error: HarnessError, heardByPrompt = false): void {
    const listeners = this.bus.emit('agent/error', [this, error])
    const turn = this.driver.openTurn
    if (turn !== undefined && this.prompts.watches(turn)) {
      this.prompts.noteError(turn, error)
      return
    }
    if (listeners > 0 || heardByPrompt) return
    process.stderr.write(
      redact(
        `dsh: agent ${this.id} (session ${this.session.id}): unhandled agent/error ${error.code}: ${error.message}\n`,
      ),
    )
  }
}
