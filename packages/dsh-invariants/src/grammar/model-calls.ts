/**
 * Where the model calls are in a log. The loop logs every chunk of a call as `assistant/chunk` the
 * moment it arrives, so a call is a run of chunks of one step: it starts at a chunk when no call of
 * that step is open and ends at its `finish` chunk, or when the step moves on without one (an
 * `assistant/message`, a `request/retry` (the loop gave up on that attempt and sends the call again),
 * a tool event, a step or turn boundary). Inbox splices, user messages, header snapshots and plugin
 * events may stand between chunks without ending the call.
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

/** What one event does to the calls, as `ModelCallSplitter.push` reports it. */
export interface CallBoundary {
  /** The event ended the open call without its `finish` (it is `ModelCall.endedBy`). */
  readonly ended?: { readonly start: number; readonly turn: number; readonly step: number }
  /** The event is a chunk that opened a new call. */
  readonly opened?: { readonly start: number; readonly turn: number; readonly step: number }
  /** The event is a chunk of the (possibly just opened) call; `finished` when it is its `finish`. */
  readonly chunk?: { readonly finished: boolean }
}

const NOTHING: CallBoundary = Object.freeze({})

/**
 * Splits a log into model calls one event at a time, keeping only the open call's position: memory
 * does not grow with the log. `push(event, index)` says what the event did.
 */
export class ModelCallSplitter {
  private open: { start: number; turn: number; step: number } | undefined

  /** The call in progress, if any. */
  get current(): { readonly start: number; readonly turn: number; readonly step: number } | undefined {
    return this.open
  }

  push(event: SessionEvent, index: number): CallBoundary {
    if (event.type === 'assistant/chunk') {
      const { turn, step, chunk } = event.data
      let ended: CallBoundary['ended']
      let opened: CallBoundary['opened']
      if (this.open !== undefined && (this.open.turn !== turn || this.open.step !== step)) {
        ended = this.open
        this.open = undefined
      }
      if (this.open === undefined) {
        this.open = { start: index, turn, step }
        opened = this.open
      }
      const finished = chunk.type === 'finish'
      if (finished) this.open = undefined
      return {
        ...(ended === undefined ? {} : { ended }),
        ...(opened === undefined ? {} : { opened }),
        chunk: { finished },
      }
    }
    if (this.open !== undefined && CALL_ENDERS.has(event.type)) {
      const ended = this.open
      this.open = undefined
      return { ended }
    }
    return NOTHING
  }
}

/** Splits `events` into the model calls they record, in order. Linear in the number of events. */
export function splitModelCalls(events: readonly SessionEvent[]): readonly ModelCall[] {
  const calls: ModelCall[] = []
  const splitter = new ModelCallSplitter()
  let chunks: number[] = []
  let open: { start: number; turn: number; step: number } | undefined
  const close = (endedBy?: number) => {
    if (open === undefined) return
    calls.push(
      Object.freeze({
        ...open,
        chunks: Object.freeze(chunks),
        ...(endedBy === undefined ? {} : { endedBy }),
      }),
    )
    open = undefined
    chunks = []
  }
  events.forEach((event, index) => {
    const boundary = splitter.push(event, index)
    if (boundary.ended !== undefined) close(index)
    if (boundary.opened !== undefined) open = { ...boundary.opened }
    if (boundary.chunk !== undefined) {
      chunks.push(index)
      if (boundary.chunk.finished) close()
    }
  })
  close()
  return Object.freeze(calls)
}
