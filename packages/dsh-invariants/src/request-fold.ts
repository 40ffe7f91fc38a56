/**
 * The checker's own fold of one log into what a request derives from: the latest `request/header`
 * and the surface history. Built from committed events only, advanced incrementally, and owned by the
 * checker: it shares no state with a live session's caches.
 */
import type { Message } from 'dsh-llm'
import {
  canonicalHeader,
  foldMessages,
  type HeaderState,
  type SessionEvent,
  surfaceMessage,
} from 'dsh-session'

/**
 * An incremental fold of a log prefix: `advance(events, to)` folds `events[position, to)` into the
 * header and the history. Appending surface events (no `surface`, or `op: 'append'`) are pushed; any
 * other surface op (a compaction `replace`) refolds the history from scratch with `foldMessages`, the
 * same fold a fresh check uses, so replace semantics live in one place. If the event it stopped at is
 * no longer where it was (the array given is not the log it folded), it starts over from seq 0.
 */
export class RequestFold {
  private nodes: Message[] = []
  private latest: HeaderState | undefined
  private lastEvent: SessionEvent | undefined
  private next = 0
  /** Events folded one by one so far (a refold counts its events again): pins the incremental cost. */
  folded = 0
  /** How many times the history was refolded from scratch (a replace, or a log that was not the same). */
  refolds = 0

  /** How many events of the log this fold has consumed: it stands for `events.slice(0, position)`. */
  get position(): number {
    return this.next
  }

  /** The latest `request/header` folded so far (canonicalised), or `undefined` before the first. */
  get header(): HeaderState | undefined {
    return this.latest
  }

  /**
   * The history folded so far. A view owned by the fold: read it before the next `advance`, copy it
   * to keep it. Its messages are the committed events' own (frozen) messages.
   */
  get history(): readonly Message[] {
    return this.nodes
  }

  /**
   * Folds `events[position, to)`. Requires `position <= to <= events.length`. Throws what
   * `foldMessages` throws for a surface replace that does not fit; the fold then stays before the
   * offending event, so the next `advance` throws the same.
   */
  advance(events: readonly SessionEvent[], to: number): void {
    if (this.next > 0 && events[this.next - 1] !== this.lastEvent) this.restart()
    for (let i = this.next; i < to; i++) {
      const event = events[i]
      if (event === undefined) continue
      this.fold(events, event, i)
      this.next = i + 1
      this.lastEvent = event
    }
  }

  private fold(events: readonly SessionEvent[], event: SessionEvent, index: number): void {
    this.folded++
    if (event.type === 'request/header') {
      this.latest = Object.freeze({
        header: canonicalHeader(event.data.header),
        reason: event.data.reason,
        seq: event.seq,
      })
      return
    }
    const message = surfaceMessage(event.type, event.data)
    if (message === undefined) return
    if (event.surface === undefined || event.surface.op === 'append') {
      this.nodes.push(message)
      return
    }
    this.nodes = foldMessages(events.slice(0, index + 1)).slice()
    this.folded += index
    this.refolds++
  }

  private restart(): void {
    this.nodes = []
    this.latest = undefined
    this.lastEvent = undefined
    this.next = 0
    this.refolds++
  }
}
