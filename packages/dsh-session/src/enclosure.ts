/**
 * The turn/step state machine of the log. `check` refuses an event that would break the enclosure
 * rules without changing anything; `apply` advances the state for an event that was committed.
 */
import { SessionError } from './errors.ts'
import type { EventPlacement, OpenTurnState } from './types.ts'

interface TurnStepData {
  readonly turn?: unknown
  readonly step?: unknown
}

/**
 * Tracks the open turn and step. Rules (placements from the event catalog): a `turn` event needs an
 * open turn; `turn/start`
 * only between turns, numbered `lastTurn + 1`; `step/start` only with no step open, numbered
 * `lastStep + 1` within the turn; `step/end` and `turn/end` must match the open step/turn, and a
 * `turn/end` with a step still open is refused; `step` events (`assistant/*`, `tool/*`, `request/retry`)
 * need the open step and must name it.
 */
export class EnclosureTracker {
  private last = 0
  private turn: number | undefined
  private step: number | undefined
  private lastStep = 0
  private state: OpenTurnState | undefined

  /** The highest turn number used so far (0 for a fresh log). */
  get lastTurn(): number {
    return this.last
  }

  /** The open turn, frozen, or `undefined` between turns. */
  get openTurn(): OpenTurnState | undefined {
    return this.state
  }

  /** Throws `SessionError` `ENCLOSURE` (naming type, seq and the rule) if the event may not stand here. */
  check(type: string, data: unknown, seq: number, placement: EventPlacement): void {
    const { turn, step } = data as TurnStepData
    // The most common event, first: a chunk naming the open step (what `requireStep` accepts).
    if (type === 'assistant/chunk' && this.step !== undefined && step === this.step && turn === this.turn)
      return
    switch (type) {
      case 'turn/start':
        if (this.turn !== undefined) this.fail(type, seq, `comes while turn ${this.turn} is still open`)
        if (turn !== this.last + 1)
          this.fail(type, seq, `numbers turn ${String(turn)}; expected ${this.last + 1}`)
        return
      case 'turn/end':
        this.requireTurn(type, seq, turn)
        if (this.step !== undefined)
          this.fail(type, seq, `comes while step ${this.step} of turn ${this.turn} is still open`)
        return
      case 'step/start':
        this.requireTurn(type, seq, turn)
        if (this.step !== undefined)
          this.fail(type, seq, `comes while step ${this.step} of turn ${this.turn} is still open`)
        if (step !== this.lastStep + 1) {
          this.fail(type, seq, `numbers step ${String(step)}; expected ${this.lastStep + 1}`)
        }
        return
      case 'step/end':
        this.requireStep(type, seq, turn, step)
        return
    }
    if (placement === 'step') this.requireStep(type, seq, turn, step)
    else if (placement === 'turn' && this.turn === undefined) {
      this.fail(type, seq, `needs an open turn; the log is between turns`)
    }
  }

  /**
   * `check` for an `assistant/chunk` whose payload's `turn` and `step` the caller has read: the same
   * verdict and error, without reading them from a payload of any type (a megamorphic load).
   */
  checkChunk(turn: number, step: number, seq: number): void {
    if (this.step !== undefined && step === this.step && turn === this.turn) return
    this.requireStep('assistant/chunk', seq, turn, step)
  }

  /** Advances the state for a committed event (which passed `check`). */
  apply(type: string, data: unknown): void {
    // Only the four types that move the state read the payload (most events, chunks above all, do not).
    switch (type) {
      case 'turn/start': {
        const turn = (data as TurnStepData).turn
        this.last = typeof turn === 'number' ? turn : this.last + 1
        this.turn = this.last
        this.step = undefined
        this.lastStep = 0
        break
      }
      case 'turn/end':
        this.turn = undefined
        this.step = undefined
        this.lastStep = 0
        break
      case 'step/start': {
        const step = (data as TurnStepData).step
        this.lastStep = typeof step === 'number' ? step : this.lastStep + 1
        this.step = this.lastStep
        break
      }
      case 'step/end':
        this.step = undefined
        break
      default:
        return
    }
    this.state =
      this.turn === undefined
        ? undefined
        : Object.freeze(
            this.step === undefined
              ? { turn: this.turn, lastStep: this.lastStep }
              : { turn: this.turn, step: this.step, lastStep: this.lastStep },
          )
  }

  private requireTurn(type: string, seq: number, turn: unknown): void {
    if (this.turn === undefined) this.fail(type, seq, 'needs an open turn; the log is between turns')
    if (turn !== this.turn) this.fail(type, seq, `names turn ${String(turn)} but turn ${this.turn} is open`)
  }

  private requireStep(type: string, seq: number, turn: unknown, step: unknown): void {
    this.requireTurn(type, seq, turn)
    if (this.step === undefined) this.fail(type, seq, `needs an open step; turn ${this.turn} has none open`)
    if (step !== this.step) this.fail(type, seq, `names step ${String(step)} but step ${this.step} is open`)
  }

  private fail(type: string, seq: number, problem: string): never {
    throw new SessionError('ENCLOSURE', `${type} at seq ${seq} ${problem}`, { eventType: type, seq })
  }
}
