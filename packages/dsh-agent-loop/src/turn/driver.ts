/**
 * The turn driver: one turn at a time, then the queue. A wake opens a turn synchronously
 * (`turn/start` and its first claim happen inside the `send` that woke it); the driver then runs
 * turns until no queued work is left, and owns what "a turn is open" means to the agent: the open
 * turn's number, its cancellation and whether a wake arrived while it ran.
 */
import {
  type EventBus,
  type HarnessError,
  llmFailure,
  type TurnEndReason,
  type TurnTrigger,
  type UserMessage,
} from 'dsh-llm'
import type { Session } from 'dsh-session'
import { AgentLoopError, AgentLoopErrorCode, describeError } from '../errors.ts'
import type { ReactLoopInbox } from '../inbox/inbox.ts'
import type { Outbox } from '../inbox/outbox.ts'
import type { LoopModelEnv } from '../model-env.ts'
import { TurnCancellation } from '../timing/cancel.ts'
import type { ToolBatchEnv } from '../tools/batch.ts'
import type { Agent, AgentStatus } from '../types.ts'
import type { Prompts } from './prompts.ts'
import { runTurn, type TurnHost } from './turn.ts'

/** What the driver needs from its agent besides the turn host. */
export interface DriverHost {
  /** The agent's id, for the error that says the driver stopped. */
  readonly agentId: string
  readonly prompts: Prompts
  /** Announces the agent's status (`running` when a turn opens, `idle` when the queue is done). */
  setStatus(status: AgentStatus): void
  /** Reports a failure on `agent/error`; `heardByPrompt` says a prompt already received it. */
  report(error: HarnessError, heardByPrompt?: boolean): void
  /** True once the agent is disposing: queued work then waits for no further turn. */
  disposing(): boolean
  /** Appends context staged after the last drain of a turn, between turns. */
  drainLateContext(): void
}

interface OpenTurn {
  readonly turn: number
  readonly batch: readonly UserMessage[]
  readonly cancellation: TurnCancellation
}

/** The parts of a `TurnHost` the agent hands its driver (the driver is the turn host itself). */
export type TurnParts = Omit<TurnHost, 'agent' | 'report' | 'turnClosed' | 'model'> & {
  readonly model: LoopModelEnv
}

/**
 * Drives an agent's turns: `wake` opens one, and the queue runs until nothing is pending. It is its
 * turns' `TurnHost`, so the agent keeps no separate host object or closures for them.
 */
export class TurnDriver implements TurnHost {
  /** The open turn's cancellation, from `turn/start` until `turn/end` is appended. */
  private cancellation: TurnCancellation | undefined
  /** A waking send or steer arrived while running (since the last turn start or cancel). */
  private wakeRequested = false
  /** The number of the open turn, from `turn/start` until `turn/end`. */
  private current: number | undefined
  private running: Promise<void> | undefined
  readonly bus: EventBus
  readonly session: Session
  readonly inbox: ReactLoopInbox
  readonly outbox: Outbox
  readonly model: LoopModelEnv
  readonly tools: ToolBatchEnv
  readonly maxSteps: number | undefined

  constructor(
    readonly agent: Agent & DriverHost,
    parts: TurnParts,
  ) {
    this.bus = parts.bus
    this.session = parts.session
    this.inbox = parts.inbox
    this.outbox = parts.outbox
    this.model = parts.model
    this.tools = parts.tools
    this.maxSteps = parts.maxSteps
  }

  /** Turn host: reports a failure on `agent/error`. */
  report(error: HarnessError): void {
    this.agent.report(error)
  }

  /** Turn host: called synchronously right after `turn/end` is appended. */
  turnClosed(): void {
    this.cancellation = undefined
    this.current = undefined
    this.model.callIds.settle()
  }

  /** The open turn's number, from `turn/start` until `turn/end`; else `undefined`. */
  get openTurn(): number | undefined {
    return this.current
  }

  /** True while a turn is open (its `turn/end` not yet appended). */
  get turnIsOpen(): boolean {
    return this.cancellation !== undefined
  }

  /** Settles when the turns running now (and any queued behind them) are done; `undefined` when idle. */
  get whenDone(): Promise<void> | undefined {
    return this.running
  }

  /**
   * Opens a turn for `trigger`, or, while one runs, notes that another should follow it. Throws what
   * opening the turn threw (the log refused `turn/start`, or the claim failed and the turn was closed).
   */
  wake(trigger: TurnTrigger, status: AgentStatus): void {
    if (status === 'running') {
      this.wakeRequested = true
      return
    }
    // The turn's cancellation exists before `running` is announced, so a `cancel()` from an
    // `agent/status` listener cancels the turn about to open instead of being a no-op.
    const cancellation = new TurnCancellation()
    this.cancellation = cancellation
    // Cleared before `running` is announced: a send from that announcement's listeners (after a
    // cancel there, say) is a wake for the turn after this one.
    this.wakeRequested = false
    this.agent.setStatus('running')
    let first: OpenTurn
    try {
      first = this.open(trigger, cancellation)
    } catch (error) {
      this.agent.setStatus('idle')
      throw error
    }
    this.running = this.drive(first)
  }

  /**
   * Cancels the open turn with `cause` (a no-op when none is open); `clearInbox` runs before the
   * signal aborts, so a `send()` from an abort listener is new work for the next turn.
   */
  cancel(cause: string, clearInbox: () => void): void {
    const cancellation = this.cancellation
    if (cancellation === undefined) return
    this.wakeRequested = false
    clearInbox()
    cancellation.cancel(cause)
  }

  /**
   * Synchronously appends `turn/start` and claims the turn's first batch. If the claim is refused,
   * the turn is closed `error` before the error is rethrown, so the log stays balanced.
   */
  private open(trigger: TurnTrigger, cancellation = new TurnCancellation()): OpenTurn {
    const { session, inbox } = this
    this.cancellation = cancellation
    const turn = session.lastTurn() + 1
    try {
      session.append('turn/start', { turn, trigger })
    } catch (error) {
      this.cancellation = undefined
      throw error
    }
    this.current = turn
    // A turn cancelled before it claimed (from an `agent/status` or `turn/start` listener) claims
    // nothing: what is pending was sent after that cancel (or kept by it) and waits for the next turn.
    if (cancellation.cause !== undefined) return { turn, cancellation, batch: [] }
    try {
      return { turn, cancellation, batch: inbox.claim(turn, true) }
    } catch (error) {
      this.cancellation = undefined
      this.current = undefined
      const failure = llmFailure(
        AgentLoopErrorCode.LOOP_FAILED,
        `claiming the inbox failed: ${describeError(error)}`,
      )
      session.append('turn/end', { turn, reason: { kind: 'error', failure } })
      throw error
    }
  }

  private async drive(first: OpenTurn): Promise<void> {
    const { prompts } = this.agent
    let current: OpenTurn | undefined = first
    try {
      while (current !== undefined) {
        const reason: TurnEndReason = await runTurn(this, current.turn, current.batch, current.cancellation)
        prompts.settle(current.turn, reason)
        const aborted = current.cancellation.cause !== undefined
        if (this.outbox.size > 0) this.agent.drainLateContext()
        current = this.next(aborted)
      }
    } catch (error) {
      this.cancellation = undefined
      this.current = undefined
      const stopped = new AgentLoopError(
        AgentLoopErrorCode.LOOP_FAILED,
        `agent ${this.agent.agentId} stopped: ${describeError(error)}`,
        { cause: error },
      )
      // No prompt will settle normally now: they hear why (and stderr only if nobody does).
      const heard = prompts.watches(current?.turn)
      prompts.abandon(stopped)
      this.agent.report(stopped, heard)
    } finally {
      this.running = undefined
      this.agent.setStatus('idle')
    }
  }

  /** The next turn after one closed: queued work runs unless the closed turn was cancelled without a later wake. */
  private next(aborted: boolean): OpenTurn | undefined {
    const woken = this.wakeRequested
    this.wakeRequested = false
    if (this.agent.disposing() || !this.inbox.hasPending()) return undefined
    if (aborted && !woken) return undefined
    return this.open({ kind: 'queued' })
  }
}
