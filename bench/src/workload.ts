/**
 * The scripted tool-loop workload shared by every harness: what the zero-latency model "says" on
 * each step, in a harness-neutral form that each driver translates once into its own chunk types.
 */

/** Text deltas streamed on every step (the same strings every step, as a model's tokens would be). */
export const TEXT_DELTAS: readonly string[] = Array.from(
  { length: 20 },
  (_, i) => `token-${String(i).padStart(2, '0')} `,
)

/** The full text of a step's text block. */
export const STEP_TEXT: string = TEXT_DELTAS.join('')

/** Name of the one tool every step calls. */
export const TOOL_NAME = 'read_file'

/** Description of the tool, as registered with each harness. */
export const TOOL_DESCRIPTION = 'Reads a file and reports its size.'

/** What the tool returns: a small result. */
export const TOOL_RESULT = '42 lines'

/** The prompt that starts the one turn. */
export const PROMPT = 'Run the scripted loop.'

/** The script of one step: its text deltas and, except on the last step, one tool call. */
export interface StepScript {
  /** Zero-based step number. */
  readonly step: number
  /** The text deltas, in order. */
  readonly texts: readonly string[]
  /** The tool call of the step; absent on the last step, which ends the turn. */
  readonly call: ScriptedCall | undefined
}

/** One tool call streamed as four argument deltas. */
export interface ScriptedCall {
  readonly id: string
  readonly name: string
  /** The argument JSON in four pieces; their concatenation is `args`. */
  readonly argDeltas: readonly [string, string, string, string]
  /** The complete argument JSON. */
  readonly args: string
}

/**
 * The script of step `step` (zero-based) in a turn of `totalSteps` steps: 20 text deltas, then one
 * tool call with four argument deltas, except on the last step, which is text only.
 */
export function stepScript(step: number, totalSteps: number): StepScript {
  if (step >= totalSteps - 1) return { step, texts: TEXT_DELTAS, call: undefined }
  const argDeltas: [string, string, string, string] = ['{"pa', 'th":"src/', `file-${step}`, '.ts"}']
  return {
    step,
    texts: TEXT_DELTAS,
    call: { id: `call-${step}`, name: TOOL_NAME, argDeltas, args: argDeltas.join('') },
  }
}

/** Width of the window over which scenario 5 spreads the agents' responses, ms. */
export const RESPONSE_SPREAD_MS = 20

/**
 * Scenario 5's response timing: before answering step `step` of agent `agent`, the model waits this
 * many milliseconds (0 to `RESPONSE_SPREAD_MS - 1`, a fixed hash: the same in every run and for
 * every harness). Independent network responses do not arrive in lockstep; without this spread all
 * agents would hit their step boundaries in the same event-loop turn.
 */
export function responseDelayMs(agent: number, step: number): number {
  let h = Math.imul(agent + 1, 0x9e3779b1) ^ Math.imul(step + 1, 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d)
  return ((h ^ (h >>> 13)) >>> 0) % RESPONSE_SPREAD_MS
}
