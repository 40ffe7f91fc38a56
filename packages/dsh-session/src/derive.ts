/**
 * The model-facing surface: the history `deriveMessages()` returns, folded from surface events.
 * The live fold projects each event once and keeps its nodes; `foldMessages` is the same fold from
 * scratch, with no caches, for checkers that must not trust the live one.
 */
import type { Message } from 'dsh-llm'
import { ChunkRun } from './chunk-runs.ts'
import { SessionError } from './errors.ts'
import type { HistoryView, Session, SessionEvent, SurfaceMeta } from './types.ts'

const EMPTY: readonly Message[] = Object.freeze([])

/**
 * A prefix `[0, length)` of an append-only backing array. The fold never changes a backing array
 * below the length of a view it handed out (a replace forks the array first), so the view stays
 * what it was when taken; its frozen array is built on the first `toArray()` and kept.
 */
class PrefixView implements HistoryView {
  // Private fields on a frozen instance: a caller holding the view can neither shorten it nor reach
  // the fold's backing array (a private field stays writable here, for the cached array).
  readonly #backing: readonly Message[]
  readonly #length: number
  #array: readonly Message[] | undefined

  constructor(backing: readonly Message[], length: number) {
    this.#backing = backing
    this.#length = length
    Object.freeze(this)
  }

  get length(): number {
    return this.#length
  }

  toArray(): readonly Message[] {
    this.#array ??= this.#length === 0 ? EMPTY : Object.freeze(this.#backing.slice(0, this.#length))
    return this.#array
  }

  at(index: number): Message | undefined {
    return index >= 0 && index < this.#length ? this.#backing[index] : undefined
  }

  continues(earlier: HistoryView): boolean {
    return (
      earlier instanceof PrefixView && earlier.#backing === this.#backing && earlier.#length <= this.#length
    )
  }
}

/**
 * The message a surface event contributes, or `undefined` for a non-surface event: `user/message`
 * (the message itself), `assistant/message` with non-empty content, `tool/result` (its message).
 */
export function surfaceMessage(type: string, data: unknown): Message | undefined {
  switch (type) {
    case 'user/message':
      return data as Message
    case 'assistant/message': {
      const message = (data as { readonly message: Message }).message
      return message.content.length > 0 ? message : undefined
    }
    case 'tool/result':
      return (data as { readonly message: Message }).message
    default:
      return undefined
  }
}

/**
 * An incremental fold of the surface. Each event is projected at most once. The nodes live in an
 * append-only backing array shared by every view taken from it: taking a view costs O(1) whatever
 * the history's length, and a replace (compaction) copies the array once before changing it when a
 * view over it is out.
 */
export class SurfaceFold {
  private nodes: Message[] = []
  /** The seq of the event that produced each node (the replacing event, for a replace). */
  private nodeSeqs: number[] = []
  private next = 0
  private view: PrefixView | undefined = new PrefixView(EMPTY, 0)
  /** A view over the current `nodes` array was handed out: fork before changing existing nodes. */
  private shared = false
  /** How many events this fold has projected (for tests pinning the incremental cost). */
  projected = 0

  /** Projects the events not seen yet and returns the surface: a frozen array, reused while unchanged. */
  derive(events: readonly (SessionEvent | ChunkRun)[]): readonly Message[] {
    return this.history(events).toArray()
  }

  /**
   * Projects the events not seen yet and returns the surface as an O(1) view (the same object
   * while unchanged); its `toArray()` is what `derive` returns.
   */
  history(events: readonly (SessionEvent | ChunkRun)[]): HistoryView {
    for (let i = this.next; i < events.length; i++) {
      const event = events[i]
      // A live log's evicted chunk runs (never surface events) are skipped undecoded.
      if (event !== undefined && !(event instanceof ChunkRun)) this.project(event)
    }
    this.next = events.length
    if (this.view === undefined) {
      this.view = new PrefixView(this.nodes, this.nodes.length)
      this.shared = true
    }
    return this.view
  }

  /**
   * Throws `INVALID_SURFACE` unless `surface` fits a candidate event at `seq` given the current surface
   * (call `derive` first so the fold is current): the event must contribute a message; a `replace`
   * range must lie within the surface and `sourceEventSeqs` must list every shadowed node's seq.
   */
  checkSurface(type: string, data: unknown, surface: SurfaceMeta, seq: number): void {
    if (surfaceMessage(type, data) === undefined) {
      this.fail(type, seq, 'carries surface metadata but contributes no message to the surface')
    }
    if (surface.op !== 'replace') return
    const problem = replaceProblem(surface, this.nodeSeqs, seq)
    if (problem !== undefined) this.fail(type, seq, problem)
  }

  /**
   * Drops the growth room of the node seqs (a pushed array keeps up to half again its length): the
   * session calls this when a turn ends, as the log then rests.
   */
  settle(): void {
    this.nodeSeqs = this.nodeSeqs.slice()
  }

  private project(event: SessionEvent): void {
    this.projected++
    const message = surfaceMessage(event.type, event.data)
    if (message === undefined) return
    const surface = event.surface
    if (surface === undefined || surface.op === 'append') {
      this.nodes.push(message)
      this.nodeSeqs.push(event.seq)
    } else {
      this.checkSurface(event.type, event.data, surface, event.seq)
      if (this.shared) {
        this.nodes = this.nodes.slice()
        this.shared = false
      }
      this.nodes.splice(surface.start, surface.end - surface.start, message)
      this.nodeSeqs.splice(surface.start, surface.end - surface.start, event.seq)
    }
    this.view = undefined
  }

  private fail(type: string, seq: number, problem: string): never {
    throw new SessionError('INVALID_SURFACE', `${type} at seq ${seq} ${problem}`, { eventType: type, seq })
  }
}

/**
 * The surface `replace` rule, shared by every fold of the surface (the live one and the invariants'
 * own): what is wrong with `replace` at `seq` over a surface whose nodes came from `nodeSeqs` (one
 * seq per node), or `undefined` when it fits — the range lies within the surface, every listed source
 * is an earlier event, and every shadowed node's seq is listed.
 */
export function replaceProblem(
  replace: { readonly start: number; readonly end: number; readonly sourceEventSeqs: readonly number[] },
  nodeSeqs: readonly number[],
  seq: number,
): string | undefined {
  const { start, end, sourceEventSeqs } = replace
  if (!(start <= end && end <= nodeSeqs.length)) {
    return `replaces [${start}, ${end}) outside the surface of ${nodeSeqs.length} messages`
  }
  const listed = new Set(sourceEventSeqs)
  for (const source of listed) {
    if (source >= seq) return `lists source seq ${source}, which is not an earlier event`
  }
  for (let i = start; i < end; i++) {
    const nodeSeq = nodeSeqs[i]
    if (nodeSeq !== undefined && !listed.has(nodeSeq)) {
      return `shadows surface node ${i} (seq ${nodeSeq}) but sourceEventSeqs does not list it`
    }
  }
  return undefined
}

/**
 * Folds `events` into the model's history from scratch (no caches shared with any live session).
 * Returns a frozen array of the events' own (frozen) messages. Throws `INVALID_SURFACE` for a replace
 * that does not fit.
 */
export function foldMessages(events: readonly SessionEvent[]): readonly Message[] {
  return new SurfaceFold().derive(events)
}

const liveFolds = new WeakMap<Session, SurfaceFold>()

/** Associates a session with its live fold (for `surfaceProjectionCount`). */
export function trackSurfaceFold(session: Session, fold: SurfaceFold): void {
  liveFolds.set(session, fold)
}

/**
 * Debug: how many events `session`'s live `deriveMessages()` fold has projected so far. Each event
 * is projected once, so this grows with the log, not with the number of `deriveMessages()` calls.
 */
export function surfaceProjectionCount(session: Session): number {
  return liveFolds.get(session)?.projected ?? 0
}
