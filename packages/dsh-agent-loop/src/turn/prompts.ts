/**
 * The agent's open prompts: each `prompt`/`stream` call waits for the turn that claims its message,
 * then settles with that turn's result (or error) once the turn closes.
 */
import type { HarnessError, MessageId, TurnEndReason } from 'dsh-llm'
import type { Session } from 'dsh-session'
import { AgentLoopErrorCode } from '../errors.ts'
import { readTurnResult, TurnError, type TurnResult, turnErrorOf } from './result.ts'

interface Waiter {
  resolve: (result: TurnResult) => void
  reject: (error: Error) => void
  turn: number | undefined
}

const unset = (): void => undefined

/**
 * Bookkeeping of the prompts of one agent, keyed by message id until claimed, then by turn. The maps
 * are made on first use: an agent driven by `send` alone never needs them (~550 bytes kept per agent).
 */
export class Prompts {
  private unclaimed: Map<MessageId, Waiter> | undefined
  private byTurn: Map<number, Waiter[]> | undefined
  /** The first error each watched turn reported on `agent/error`. */
  private reported: Map<number, HarnessError> | undefined

  constructor(private readonly session: Session) {}

  /** A promise settled by the turn that claims `id`. Call before the message is sent. */
  track(id: MessageId): { readonly promise: Promise<TurnResult>; turn(): number | undefined } {
    const waiter: Waiter = { resolve: unset, reject: unset, turn: undefined }
    const promise = new Promise<TurnResult>((resolve, reject) => {
      waiter.resolve = resolve
      waiter.reject = reject
    })
    this.unclaimed ??= new Map()
    this.unclaimed.set(id, waiter)
    return { promise, turn: () => waiter.turn }
  }

  /** Forgets the waiter of `id` (the send was refused) and rejects it with `error`. */
  refuse(id: MessageId, error: Error): void {
    this.unclaimed?.get(id)?.reject(error)
    this.unclaimed?.delete(id)
  }

  /** Message `id` was claimed by `turn`. */
  claimed(id: MessageId, turn: number): void {
    const waiter = this.unclaimed?.get(id)
    if (waiter === undefined) return
    this.unclaimed?.delete(id)
    waiter.turn = turn
    this.byTurn ??= new Map()
    const list = this.byTurn.get(turn)
    if (list === undefined) this.byTurn.set(turn, [waiter])
    else list.push(waiter)
  }

  /** Message `id` left the inbox without being claimed (cancel, clear, remove). */
  discarded(id: MessageId): void {
    const waiter = this.unclaimed?.get(id)
    if (waiter === undefined) return
    this.unclaimed?.delete(id)
    waiter.reject(
      new TurnError(
        AgentLoopErrorCode.TURN_CANCELLED,
        `prompt message ${id} was discarded from the inbox of session ${this.session.id} before its turn opened`,
        undefined,
      ),
    )
  }

  /** True when a prompt waits for `turn`: its errors reach that caller as the rejection's cause. */
  watches(turn: number | undefined): boolean {
    return turn !== undefined && this.byTurn?.has(turn) === true
  }

  /** Keeps the first error `turn` reported, as the cause of its prompts' rejection. */
  noteError(turn: number, error: HarnessError): void {
    this.reported ??= new Map()
    if (!this.reported.has(turn)) this.reported.set(turn, error)
  }

  /** Turn `turn` closed with `reason`: settles its prompts. */
  settle(turn: number, reason: TurnEndReason): void {
    const waiters = this.byTurn?.get(turn)
    const reported = this.reported?.get(turn)
    this.reported?.delete(turn)
    if (waiters === undefined) return
    this.byTurn?.delete(turn)
    const result = readTurnResult(this.session, turn, reason)
    const error = turnErrorOf(result, reported)
    for (const waiter of waiters) {
      if (error === undefined) waiter.resolve(result)
      else waiter.reject(error)
    }
  }

  /** Rejects every open prompt with `error` (the agent stopped or was disposed). */
  abandon(error: Error): void {
    for (const waiter of this.unclaimed?.values() ?? []) waiter.reject(error)
    for (const list of this.byTurn?.values() ?? []) for (const waiter of list) waiter.reject(error)
    this.unclaimed?.clear()
    this.byTurn?.clear()
    this.reported?.clear()
  }
}
