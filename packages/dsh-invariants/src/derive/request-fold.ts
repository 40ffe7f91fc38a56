/**
 * The checker's own fold of one log into what a request derives from: the latest `request/header`
 * and the surface history. Built from committed events only, one event at a time, and owned by the
 * checker: it shares no state with a live session's caches. It also follows the history's tool
 * adjacency, so every request derived from it is checked without re-reading the history.
 */
import type { Message } from 'dsh-llm'
import {
  canonicalHeader,
  type HeaderState,
  type HistoryView,
  replaceProblem,
  SessionError,
  type SessionEvent,
  surfaceMessage,
} from 'dsh-session'
import { type AdjacencyProblem, ToolAdjacency } from '../grammar/tool-adjacency.ts'

/**
 * An incremental fold of a log prefix. `push(event)` folds the next event; `advance(events, to)` folds
 * `events[position, to)` of a log held in memory. Appending surface events (no `surface`, or
 * `op: 'append'`) are pushed; a `replace {start, end}` splices the history in place, after the same
 * checks a session applies (the range lies in the history, `sourceEventSeqs` lists every shadowed
 * node's seq, all earlier than the event).
 */
/**
 * A log read one event at a time (a live session), without taking a snapshot. With `nonChunkSeq` (or
 * else `eventTypeAt`), the fold skips `assistant/chunk` events (never surface, never a header) without
 * rebuilding them: a run of them at once, or one at a time.
 */
export interface EventReader {
  eventAt(seq: number): SessionEvent | undefined
  eventTypeAt?(seq: number): string | undefined
  nonChunkSeq?(seq: number): number
}

function isEventArray(events: readonly SessionEvent[] | EventReader): events is readonly SessionEvent[] {
  return Array.isArray(events)
}

export class RequestFold {
  private nodes: Message[] = []
  /** A `historyView()` over the current `nodes` array is out: copy the array before a replace. */
  private shared = false
  private nodeSeqs: number[] = []
  private latest: HeaderState | undefined
  /** The last event folded that is not a chunk, and its seq: `advance` checks it is still there. */
  private lastEvent: SessionEvent | undefined
  private lastSeq = -1
  private next = 0
  private readonly adjacency = new ToolAdjacency()
  private problems: AdjacencyProblem[] = []
  /** Events folded one by one so far (a restart counts its events again): pins the incremental cost. */
  folded = 0
  /** How many times the history was rebuilt (a surface replace, or a log that was not the same). */
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
   * The history folded so far. A view owned by the fold: read it before the next `push`, copy it
   * to keep it. Its messages are the committed events' own (frozen) messages.
   */
  get history(): readonly Message[] {
    return this.nodes
  }

  /**
   * The history as it is now, as an O(1) view: consecutive views share one backing array (the fold
   * only appends to it; a replace copies it first while a view is out), so views of every request of
   * a log take memory linear in the log. `toArray()` builds a new frozen array on each call.
   */
  historyView(): HistoryView {
    this.shared = true
    return new HistoryPrefix(this.nodes, this.nodes.length)
  }

  /** The tool calls of the history's last assistant message still waiting for a result, in model order. */
  get unansweredCalls(): readonly string[] {
    return this.adjacency.unanswered
  }

  /** Index (in `history`) of the assistant message whose calls are unanswered. */
  get unansweredAt(): number {
    return this.adjacency.callsIndex
  }

  /** The adjacency problems found in the history since the last call, in history order; forgets them. */
  takeAdjacencyProblems(): readonly AdjacencyProblem[] {
    const taken = this.problems
    if (taken.length > 0) this.problems = []
    return taken
  }

  /**
   * Folds `events[position, to)`. Requires `position <= to <= events.length`. If the last non-chunk
   * event it folded is no longer where it was (the log given is not the one it folded), it starts over
   * from seq 0.
   * Throws what `push` throws; the fold then stays before the offending event.
   */
  advance(events: readonly SessionEvent[] | EventReader, to: number): void {
    if (isEventArray(events)) {
      if (this.lastSeq >= 0 && events[this.lastSeq] !== this.lastEvent) this.restart()
      for (let i = this.next; i < to; i++) {
        const event = events[i]
        if (event !== undefined) this.push(event)
      }
      return
    }
    if (this.lastSeq >= 0 && events.eventAt(this.lastSeq) !== this.lastEvent) this.restart()
    // Chunk entries contribute nothing to a request: passed over unread (a folded chunk is not
    // rebuilt), a run of them at once where the log can say where it ends.
    const skip = events.nonChunkSeq === undefined ? undefined : events.nonChunkSeq.bind(events)
    const typeAt =
      skip !== undefined || events.eventTypeAt === undefined ? undefined : events.eventTypeAt.bind(events)
    for (let i = this.next; i < to; i++) {
      const past =
        skip === undefined ? (typeAt?.(i) === 'assistant/chunk' ? i + 1 : i) : Math.min(skip(i), to)
      if (past > i) {
        this.folded += past - i
        this.next += past - i
        i = past - 1
        continue
      }
      const event = events.eventAt(i)
      if (event !== undefined) this.push(event)
    }
  }

  /**
   * Folds the next event. Throws `SessionError` `INVALID_SURFACE` (naming the event type and seq) for
   * a surface `replace` that does not fit; nothing is folded then, and the position does not move.
   */
  push(event: SessionEvent): void {
    this.fold(event)
    this.skip(event)
  }

  /** Moves past `event` without folding it: for an offline checker that reported it and goes on. */
  skip(event: SessionEvent): void {
    this.next++
    // A chunk event read from a live log is rebuilt on every read, so it cannot anchor the check.
    if (event.type === 'assistant/chunk') return
    this.lastEvent = event
    this.lastSeq = this.next - 1
  }

  private fold(event: SessionEvent): void {
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
    const surface = event.surface
    if (surface === undefined || surface.op === 'append') {
      this.nodes.push(message)
      this.nodeSeqs.push(event.seq)
      const problem = this.adjacency.push(message)
      if (problem !== undefined) this.problems.push(problem)
      return
    }
    if (surface.op !== 'replace') return
    const { start, end } = surface
    const problem = replaceProblem(surface, this.nodeSeqs, event.seq)
    if (problem !== undefined) invalid(event, problem)
    if (this.shared) {
      this.nodes = this.nodes.slice()
      this.shared = false
    }
    this.nodes.splice(start, end - start, message)
    this.nodeSeqs.splice(start, end - start, event.seq)
    this.refolds++
    // The history changed from `start` on: follow it again, reporting only what the change brought.
    this.adjacency.reset()
    for (const node of this.nodes) {
      const problem = this.adjacency.push(node)
      if (problem !== undefined && problem.index >= start) this.problems.push(problem)
    }
  }

  private restart(): void {
    this.nodes = []
    this.shared = false
    this.nodeSeqs = []
    this.latest = undefined
    this.lastEvent = undefined
    this.lastSeq = -1
    this.next = 0
    this.adjacency.reset()
    this.problems = []
    this.refolds++
  }
}

function invalid(event: SessionEvent, problem: string): never {
  throw new SessionError('INVALID_SURFACE', `${event.type} at seq ${event.seq} ${problem}`, {
    eventType: event.type,
    seq: event.seq,
  })
}

/** `[0, length)` of a backing array the fold never changes below `length` while the view is out. */
class HistoryPrefix implements HistoryView {
  readonly #backing: readonly Message[]
  readonly length: number

  constructor(backing: readonly Message[], length: number) {
    this.#backing = backing
    this.length = length
  }

  toArray(): readonly Message[] {
    return Object.freeze(this.#backing.slice(0, this.length))
  }

  at(index: number): Message | undefined {
    return index >= 0 && index < this.length ? this.#backing[index] : undefined
  }

  continues(earlier: HistoryView): boolean {
    return (
      earlier instanceof HistoryPrefix && earlier.#backing === this.#backing && earlier.length <= this.length
    )
  }
}
