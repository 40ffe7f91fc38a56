/**
 * Where the model calls are in a log. The loop logs every chunk of a call as `assistant/chunk` the
 * moment it arrives, so a call is a run of chunks of one step: it starts at a chunk when no call of
 * that step is open and ends at its `finish` chunk, or when the step moves on without one (an
 * `assistant/message`, a `request/retry` (the loop gave up on that attempt and sends the call again),
 * a tool event, a step or turn boundary). Inbox splices, user messages, header
 * snapshots and plugin events may stand between chunks without ending the call.
 */
import type { SessionEvent } from 'dsh-session'

/** One model call found in a log. Indices are positions in the array that was split. */
export interface ModelCall {
  /** Index of the call's first `assistant/chunk`: the request derives from the events before it. */
  readonly start: number
  readonly turn: number
  readonly step: number
  /** Indices of the call's `assistant/chunk` events, in order. */
  readonly chunks: readonly number[]
  /** Index of the event that ended the call without a `finish` chunk, if any. */
  readonly endedBy?: number
}

const CALL_ENDERS = new Set([
  'assistant/message',
  'request/retry',
  'tool/call',
  'tool/result',
  'step/start',
  'step/end',
  'turn/start',
  'turn/end',
  'session/end-seed',
])

interface OpenCall {
  start: number
  turn: number
  step: number
  chunks: number[]
}

/** Splits `events` into the model calls they record, in order. Linear in the number of events. */
export function splitModelCalls(events: readonly SessionEvent[]): readonly ModelCall[] {
  const calls: ModelCall[] = []
  let open: OpenCall | undefined
  const close = (endedBy?: number) => {
    if (open === undefined) return
    calls.push(
      Object.freeze({
        ...open,
        chunks: Object.freeze(open.chunks),
        ...(endedBy === undefined ? {} : { endedBy }),
      }),
    )
    open = undefined
  }
  for (let i = 0; i < events.length; i++) {
    const event = events[i]
    if (event === undefined) continue
    if (event.type === 'assistant/chunk') {
      const { turn, step, chunk } = event.data
      if (open !== undefined && (open.turn !== turn || open.step !== step)) close(i)
      open ??= { start: i, turn, step, chunks: [] }
      open.chunks.push(i)
      if (chunk.type === 'finish') close()
    } else if (CALL_ENDERS.has(event.type)) {
      close(i)
    }
  }
  close()
  return Object.freeze(calls)
}
