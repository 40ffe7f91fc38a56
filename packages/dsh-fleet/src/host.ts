/**
 * One host of a fleet: claims sessions with pending work, runs their turns through `ctx.agentLoop`,
 * delivers their mailbox, releases them when idle, and drains on shutdown. Leases are kept by the
 * storage's renewal; a lost lease stops the session here at once.
 */
import type { Context } from 'cordis'
import type { Agent, ResumeOptions } from 'dsh-agent-loop'
import { HarnessError, type SessionId, type UserMessage } from 'dsh-llm'
import type { SessionError } from 'dsh-session'
import {
  type Acceptance,
  claimableSessions,
  fenceSessions,
  Mailbox,
  MailboxListener,
  type MailboxSendOptions,
  type PostgresStorage,
} from 'dsh-session-postgres'
import { DRAIN_CAUSE, interruptedNote, wasDrainedMidTurn } from './handover.ts'

/** What a fleet host reports, for logs and tests. */
export type FleetHostEvent =
  | { readonly type: 'claimed'; readonly sessionId: SessionId; readonly repairedEvents: number }
  | { readonly type: 'released'; readonly sessionId: SessionId }
  | { readonly type: 'lost'; readonly sessionId: SessionId; readonly error: SessionError }
  | { readonly type: 'error'; readonly sessionId?: SessionId; readonly error: unknown }

/** Options of `FleetHost.start`. */
export interface FleetHostOptions {
  /** An app with `llm`, `sessions` (over `storage`), `tools` and `agentLoop` mounted. */
  readonly ctx: Context
  /** The storage `ctx.sessions` writes through. */
  readonly storage: PostgresStorage
  /** How to run a claimed session (provider, model, tools, ...), fixed or per session. */
  readonly agent: ResumeOptions | ((sessionId: SessionId) => ResumeOptions)
  /** The most sessions this host runs at once. Default 50. */
  readonly maxSessions?: number
  /** How often to look for claimable sessions besides NOTIFY wake-ups, in ms. Default 1000. */
  readonly pollEveryMs?: number
  /** How long an idle session with nothing pending stays held before release, in ms. Default 200. */
  readonly lingerMs?: number
  /**
   * What to send a session whose last turn was interrupted (its host died mid-turn) when it is
   * claimed, so its work goes on; `false` sends nothing. Default: a plugin-sourced note asking the
   * model to continue.
   */
  readonly continueInterrupted?: false | ((sessionId: SessionId) => UserMessage)
  /** Told about claims, releases, lost leases and errors. */
  readonly onEvent?: (event: FleetHostEvent) => void
}

interface Running {
  readonly agent: Agent
  /** Message ids handed to the agent during this tenure: never handed twice. */
  readonly handed: Set<string>
  pumping: Promise<void>
  releasing: boolean
}

/** How many `agent/error` listeners `ctx` has (Cordis keeps them in `ctx.events._hooks`). */
function agentErrorListeners(ctx: Context): number {
  const hooks = (ctx.events as unknown as { _hooks?: Record<string, unknown[] | undefined> })._hooks
  return hooks?.['agent/error']?.length ?? 0
}

/**
 * A fleet host. `start` begins claiming; `send`/`inject` address any session of the fleet (durable
 * on resolve); `drain` stops claiming, lets running turns finish until a deadline, cancels the rest
 * (keeping their inboxes) and releases every lease.
 */
export class FleetHost {
  /** The mailbox this host sends through (usable without a host, see `Mailbox`). */
  readonly mailbox: Mailbox
  private readonly running = new Map<string, Running>()
  private readonly options: FleetHostOptions
  private readonly listener: MailboxListener
  private readonly disposers: (() => void)[] = []
  private pollTimer: NodeJS.Timeout | undefined
  private ticking: Promise<void> | undefined
  private tickAgain = false
  private stopped = false
  /** Agents whose session's lease was taken over: their remaining errors are expected. */
  private readonly lost = new WeakSet<Agent>()

  private constructor(options: FleetHostOptions) {
    if (options.ctx.sessions.storage !== options.storage) {
      throw new TypeError('FleetHost: ctx.sessions must write through the given storage')
    }
    this.options = options
    this.mailbox = new Mailbox(options.storage.pool)
    this.listener = new MailboxListener(
      options.storage.pool,
      (sessionId) => this.onNotify(sessionId),
      () => this.wake(),
    )
  }

  /** Starts a host: listens for sends, installs the fencing guard, and claims work. */
  static async start(options: FleetHostOptions): Promise<FleetHost> {
    const host = new FleetHost(options)
    await host.listener.start()
    host.disposers.push(fenceSessions(options.ctx.sessions, options.storage))
    host.disposers.push(options.storage.onLeaseLost((sessionId, error) => void host.lose(sessionId, error)))
    host.disposers.push(options.ctx.on('agent/error', (agent, error) => host.onAgentError(agent, error)))
    host.pollTimer = setInterval(() => host.wake(), options.pollEveryMs ?? 1000)
    host.wake()
    return host
  }

  /** The sessions this host runs now. */
  sessions(): SessionId[] {
    return [...this.running.keys()] as SessionId[]
  }

  /** Sends to any session of the fleet (`Agent.send` semantics); resolves once accepted durably. */
  async send(sessionId: SessionId, message: UserMessage, options?: MailboxSendOptions): Promise<Acceptance> {
    const accepted = await this.mailbox.send(sessionId, message, options)
    if (this.running.has(sessionId)) void this.pump(sessionId)
    return accepted
  }

  /** Injects into any session of the fleet (`Agent.inject` semantics); resolves once accepted durably. */
  async inject(sessionId: SessionId, message: UserMessage): Promise<Acceptance> {
    const accepted = await this.mailbox.inject(sessionId, message)
    if (this.running.has(sessionId)) void this.pump(sessionId)
    return accepted
  }

  /**
   * Stops claiming and listening; waits up to `deadlineMs` for running turns to finish, cancels the
   * rest (cause `host draining`, inbox kept), then releases every session (flagging those with
   * queued work, so another host claims them). Idempotent.
   */
  async drain(deadlineMs = 10_000): Promise<void> {
    if (!this.stopped) {
      this.stopped = true
      clearInterval(this.pollTimer)
      await this.listener.stop()
    }
    await this.ticking
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, deadlineMs).unref())
    await Promise.all(
      [...this.running.entries()].map(async ([id, entry]) => {
        await Promise.race([entry.agent.whenIdle(), deadline])
        // A turn still running is cut at its next safe point and handed on: the session is flagged
        // so another host claims it at once and continues the turn (see `claim`).
        const handOn = entry.agent.status === 'running'
        if (handOn) entry.agent.cancel(DRAIN_CAUSE, { keepInbox: true })
        await this.release(id as SessionId, entry, handOn)
      }),
    )
    for (const dispose of this.disposers.splice(0)) dispose()
  }

  /** Asks for a claim pass soon (coalesced). */
  private wake(): void {
    if (this.stopped) return
    if (this.ticking !== undefined) {
      this.tickAgain = true
      return
    }
    this.ticking = this.tick()
      .catch((error: unknown) => this.report({ type: 'error', error }))
      .finally(() => {
        this.ticking = undefined
        if (this.tickAgain) {
          this.tickAgain = false
          this.wake()
        }
      })
  }

  private async tick(): Promise<void> {
    const room = (this.options.maxSessions ?? 50) - this.running.size
    const ids = await claimableSessions(this.options.storage.pool, room, [...this.running.keys()])
    await Promise.all(ids.map((id) => this.claim(id)))
  }

  private onNotify(sessionId: string): void {
    if (this.running.has(sessionId)) void this.pump(sessionId as SessionId)
    else this.wake()
  }

  private async claim(sessionId: SessionId): Promise<void> {
    if (this.stopped || this.running.has(sessionId)) return
    const options =
      typeof this.options.agent === 'function' ? this.options.agent(sessionId) : this.options.agent
    let agent: Agent
    try {
      agent = await this.options.ctx.agentLoop.resume(sessionId, options)
    } catch (error) {
      // Another host won the race for this session: not an error.
      if (error instanceof HarnessError && error.code === 'LOCKED') return
      this.report({ type: 'error', sessionId, error })
      return
    }
    const entry: Running = { agent, handed: new Set(), pumping: Promise.resolve(), releasing: false }
    this.running.set(sessionId, entry)
    const repaired = agent.session.loadReport?.repairedEvents ?? 0
    this.report({ type: 'claimed', sessionId, repairedEvents: repaired })
    try {
      const note = this.options.continueInterrupted ?? interruptedNote
      if ((repaired > 0 || wasDrainedMidTurn(agent.session.events)) && note !== false) {
        agent.send(note(sessionId))
      }
      this.requeue(agent)
    } catch (error) {
      this.report({ type: 'error', sessionId, error })
    }
    await this.pump(sessionId)
    void this.supervise(sessionId, entry)
  }

  /** Re-queues inbox work a previous holder left waiting, so it runs now (same messages, same order). */
  private requeue(agent: Agent): void {
    const { nextTurn, nextStep } = agent.inbox.snapshot()
    if (nextTurn.length === 0 && nextStep.length === 0) return
    agent.inbox.clear()
    // The last next-step message wakes only when no next-turn message will.
    for (const [i, message] of nextStep.entries()) {
      agent.send(message, { target: 'next-step', wakeup: nextTurn.length === 0 && i === nextStep.length - 1 })
    }
    for (const [i, message] of nextTurn.entries())
      agent.send(message, { target: 'next-turn', wakeup: i === 0 })
  }

  /** Delivers pending mailbox messages to the running session (serialised per session). */
  private pump(sessionId: SessionId): Promise<void> {
    const entry = this.running.get(sessionId)
    if (entry === undefined) return Promise.resolve()
    entry.pumping = entry.pumping
      .then(() => this.deliver(sessionId, entry))
      .catch((error: unknown) => this.report({ type: 'error', sessionId, error }))
    return entry.pumping
  }

  private async deliver(sessionId: SessionId, entry: Running): Promise<void> {
    if (entry.releasing || !this.options.storage.holds(sessionId)) return
    const pending = await this.mailbox.pending(sessionId)
    const { agent } = entry
    for (const row of pending) {
      if (entry.handed.has(row.messageId) || entry.releasing || agent.disposed) continue
      entry.handed.add(row.messageId)
      this.options.storage.awaitDelivery(sessionId, row.messageId, row.mailboxId)
      try {
        if (row.kind === 'send') agent.send(row.message, { target: row.target, wakeup: row.wakeup })
        else agent.inject(row.message)
      } catch (error) {
        this.options.storage.forgetDelivery(sessionId, row.messageId)
        const reason = error instanceof Error ? error.message : String(error)
        await this.mailbox.refuse(row.mailboxId, reason)
        this.report({ type: 'error', sessionId, error })
      }
    }
  }

  /** Waits for the session to go quiet with nothing pending, then releases it. */
  private async supervise(sessionId: SessionId, entry: Running): Promise<void> {
    const linger = this.options.lingerMs ?? 200
    while (this.running.get(sessionId) === entry && !entry.releasing) {
      await entry.agent.whenIdle()
      await entry.pumping
      await new Promise((resolve) => setTimeout(resolve, linger))
      if (this.running.get(sessionId) !== entry || entry.releasing) return
      if (entry.agent.status === 'running') continue
      const waiting = await this.mailbox.pending(sessionId).catch(() => undefined)
      if (waiting === undefined) continue
      if (waiting.some((row) => !entry.handed.has(row.messageId))) {
        await this.pump(sessionId)
        continue
      }
      // Handed but not yet logged (an inject waiting for its flush): wait for durability first.
      if (waiting.length > 0) {
        await entry.agent.session.flush().catch(() => undefined)
        continue
      }
      await this.release(sessionId, entry)
      return
    }
  }

  private async release(sessionId: SessionId, entry: Running, handOn = false): Promise<void> {
    if (entry.releasing) return
    entry.releasing = true
    const { agent } = entry
    try {
      // Disposing waits for a cancelled turn to end, so the inbox is final afterwards.
      await agent.whenIdle()
      const inbox = agent.inbox.snapshot()
      if (handOn || inbox.nextTurn.length > 0 || inbox.nextStep.length > 0) {
        this.options.storage.markWantsHost(sessionId)
      }
      await agent.dispose()
    } catch (error) {
      this.report({ type: 'error', sessionId, error })
    }
    if (this.running.get(sessionId) === entry) this.running.delete(sessionId)
    this.report({ type: 'released', sessionId })
    // A send may have arrived while releasing: let a claim pass pick it up.
    this.wake()
  }

  /** The lease was taken over: stop the session here at once, without flushing. */
  private async lose(sessionId: SessionId, error: SessionError): Promise<void> {
    const entry = this.running.get(sessionId)
    if (entry === undefined) return
    this.running.delete(sessionId)
    entry.releasing = true
    this.lost.add(entry.agent)
    this.report({ type: 'lost', sessionId, error })
    // The flush inside close fails at once (the storage knows the lease is lost); close still
    // forgets the session and marks it closed, so the agent's next append stops.
    await this.options.ctx.sessions.close(entry.agent.session).catch(() => undefined)
    await entry.agent.dispose().catch(() => undefined)
  }

  /**
   * An agent's error. For a session whose lease was lost it is the expected end of the deposed turn
   * (its appends fail `CLOSED`/`LEASE_LOST`): the `lost` notice said it all, so it is dropped. Others
   * go to `onEvent` as `error`, or to stderr when nobody listens (as an unheard agent error would).
   */
  private onAgentError(agent: Agent, error: HarnessError): void {
    if (this.lost.has(agent)) return
    const mine = [...this.running.values()].some((entry) => entry.agent === agent)
    if (!mine) {
      // Another agent of this context: this listener must not make its error look heard.
      if (agentErrorListeners(this.options.ctx) === 1) {
        process.stderr.write(
          `dsh: agent ${agent.id} (session ${agent.session.id}): unhandled agent/error ${error.code}: ${error.message}\n`,
        )
      }
      return
    }
    if (this.options.onEvent !== undefined) {
      this.report({ type: 'error', sessionId: agent.session.id, error })
      return
    }
    process.stderr.write(
      `dsh-fleet: session ${agent.session.id}: agent error ${error.code}: ${error.message}\n`,
    )
  }

  private report(event: FleetHostEvent): void {
    try {
      this.options.onEvent?.(event)
    } catch {
      // A reporting listener's failure must not stop the host.
    }
  }
}
