/** `agent.stream`: the events of one prompted turn as an async iterable, for streaming UIs. */
import type { SessionEvent } from 'dsh-session'
import type { TurnResult } from './result.ts'

/**
 * The events of one prompted turn, from its `turn/start` to its `turn/end` (inclusive), in log
 * order. Iteration ends after `turn/end`, throwing the turn's `TurnError` if it did not complete;
 * breaking out early stops the listening, not the turn. Iterate it once.
 */
export interface TurnStream extends AsyncIterable<SessionEvent> {
  /** Settles like `agent.prompt` does. Already handled: an unawaited rejection is not reported. */
  readonly result: Promise<TurnResult>
}

/** What a turn stream listens through. */
export interface TurnStreamSource {
  /** Calls `listener` with every event committed to the session from now on; returns the unsubscriber. */
  subscribe(listener: (event: SessionEvent) => void): () => void
  /** The turn that claimed the prompt, once it has. */
  turn(): number | undefined
  readonly result: Promise<TurnResult>
}

/** Subscribes at once (so no event of the turn is missed) and returns the stream. */
export function turnStream(source: TurnStreamSource): TurnStream {
  const buffered: SessionEvent[] = []
  let wake: (() => void) | undefined
  const notify = (): void => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  const unsubscribe = source.subscribe((event) => {
    buffered.push(event)
    notify()
  })
  let settled = false
  const result = source.result
  // The turn/end is committed before the result settles: nothing after it belongs to the stream.
  const done = (): void => {
    settled = true
    unsubscribe()
    notify()
  }
  result.then(done, done)
  async function* events(): AsyncGenerator<SessionEvent> {
    let read = 0
    let inside = false
    try {
      while (true) {
        while (read < buffered.length) {
          const event = buffered[read++] as SessionEvent
          if (!inside) {
            if (event.type !== 'turn/start' || event.data.turn !== source.turn()) continue
            inside = true
          }
          yield event
          if (event.type === 'turn/end' && event.data.turn === source.turn()) {
            await result
            return
          }
        }
        buffered.length = 0
        read = 0
        if (settled) {
          await result
          return
        }
        await new Promise<void>((resolve) => {
          wake = resolve
        })
      }
    } finally {
      unsubscribe()
    }
  }
  const iterable = events()
  return { result, [Symbol.asyncIterator]: () => iterable }
}
