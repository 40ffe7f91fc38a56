/** What the log grammar tracks of the open turn and step (which types need them open: the session event catalog). */
import type { CallAssembly } from './message-chunks.ts'

/** One tool call of the open step. */
export interface CallState {
  /** Proposed by a tool-call block of one of the step's `assistant/message`s. */
  proposed: boolean
  /** Seq of its `tool/call`, once logged. */
  calledAt: number | undefined
  /** Seq of its `tool/result`, once logged. */
  answeredAt: number | undefined
}

/** The open step of the open turn. */
export interface StepState {
  readonly step: number
  readonly openedAt: number
  /** Tool calls by id, in the order they were proposed. */
  readonly calls: Map<string, CallState>
  /** The chunks of the step's model call in progress. */
  readonly output: CallAssembly
}

/** The open turn. */
export interface TurnState {
  readonly turn: number
  readonly openedAt: number
  lastStep: number
  step: StepState | undefined
}
