/** What the log grammar tracks of the open turn and step, and which event types need them open. */
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

/** Event types that only stand inside an open turn. */
export const TURN_MEMBERS = new Set(['turn/end', 'step/start', 'step/end', 'request/header'])
/** Event types that only stand inside the open step they name. */
export const STEP_MEMBERS = new Set([
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'request/retry',
])
