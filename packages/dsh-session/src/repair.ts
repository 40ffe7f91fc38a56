/**
 * Crash repair: the events that close a turn a crash left open. A crashed turn is closed, never
 * truncated: what was logged stays, and the closers say what became of the unfinished work.
 */
import { CallId, createToolResultMessage, MessageId } from 'dsh-llm'
import { EnclosureTracker } from './enclosure.ts'
import type { SessionEvent, SessionEventInput } from './types.ts'

/** Codes of the error results repair writes for unanswered tool calls. */
export const RepairErrorCode = {
  /** The call's `tool/call` was logged: it may have run, but no result was recorded. */
  TOOL_OUTCOME_UNKNOWN: 'TOOL_OUTCOME_UNKNOWN',
  /** The model asked for the call, but no `tool/call` was logged: it never started. */
  TOOL_NOT_STARTED: 'TOOL_NOT_STARTED',
} as const

interface Call {
  readonly id: string
  readonly name: string
  logged: boolean
}

/**
 * For a log whose last turn is open, the events that close it, in order: an error `tool/result` for
 * each unanswered call of the open step (in call order: the step's assistant tool-call blocks, then
 * logged `tool/call`s not among them), `step/end` if a step is open, then `turn/end {interrupted}`.
 * Empty for a log with no open turn. Deterministic: result message ids are `repair-<callId>`.
 */
export function interruptedTurnClosers(events: readonly SessionEvent[]): SessionEventInput[] {
  const tracker = new EnclosureTracker()
  let stepStart = 0
  for (const event of events) {
    tracker.apply(event.type, event.data)
    if (event.type === 'step/start') stepStart = event.seq
  }
  const open = tracker.openTurn
  if (open === undefined) return []
  const closers: SessionEventInput[] = []
  const { turn, step } = open
  if (step !== undefined) {
    for (const call of unansweredCalls(events, stepStart)) {
      const code = call.logged ? RepairErrorCode.TOOL_OUTCOME_UNKNOWN : RepairErrorCode.TOOL_NOT_STARTED
      const text = call.logged
        ? `Tool call ${call.id} (${call.name}) started, but the session ended before its result was recorded; its outcome is unknown.`
        : `Tool call ${call.id} (${call.name}) was not started before the session ended.`
      const message = createToolResultMessage({
        callId: CallId(call.id),
        content: [{ type: 'text', text }],
        isError: true,
        id: MessageId(`repair-${call.id}`),
      })
      closers.push({ type: 'tool/result', data: { turn, step, message, error: { code, message: text } } })
    }
    closers.push({ type: 'step/end', data: { turn, step } })
  }
  closers.push({ type: 'turn/end', data: { turn, reason: { kind: 'interrupted' } } })
  return closers
}

function unansweredCalls(events: readonly SessionEvent[], from: number): Call[] {
  const calls = new Map<string, Call>()
  const answered = new Set<string>()
  const logged: Call[] = []
  for (let i = from; i < events.length; i++) {
    const event = events[i]
    if (event === undefined) continue
    switch (event.type) {
      case 'assistant/message':
        for (const block of event.data.message.content) {
          if (block.type === 'tool-call' && !calls.has(block.id)) {
            calls.set(block.id, { id: block.id, name: block.name, logged: false })
          }
        }
        break
      case 'tool/call':
        logged.push({ id: event.data.callId, name: event.data.name, logged: true })
        break
      case 'tool/result': {
        const block = event.data.message.content[0]
        answered.add(block.toolCallId)
        break
      }
    }
  }
  for (const call of logged) {
    const known = calls.get(call.id)
    if (known === undefined) calls.set(call.id, call)
    else known.logged = true
  }
  return [...calls.values()].filter((call) => !answered.has(call.id))
}
