/**
 * The model-facing surface: the history `deriveMessages()` returns, folded from surface events.
 * The live fold projects each event once and keeps its nodes; `foldMessages` is the same fold from
 * scratch, with no caches, for checkers that must not trust the live one.
 */
import type { Message } from 'dsh-llm'
import { SessionError } from './errors.ts'
import type { Session, SessionEvent, SurfaceMeta } from './types.ts'

const EMPTY: readonly Message[] = Object.freeze([])

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

/** An incremental fold of the surface. Each event is projected at most once. */
export class SurfaceFold {
  private readonly nodes: Message[] = []
  /** The seq of the event that produced each node (the replacing event, for a replace). */
  private readonly nodeSeqs: number[] = []
  private next = 0
  private view: readonly Message[] | undefined = EMPTY
  /** How many events this fold has projected (for tests pinning the incremental cost). */
  projected = 0

  /** Projects the events not seen yet and returns the surface: a frozen array, reused while unchanged. */
  derive(events: readonly SessionEvent[]): readonly Message[] {
    for (let i = this.next; i < events.length; i++) {
      const event = events[i]
      if (event !== undefined) this.project(event)
    }
    this.next = events.length
    if (this.view === undefined) this.view = Object.freeze(this.nodes.slice())
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
    const { start, end, sourceEventSeqs } = surface
    if (!(start <= end && end <= this.nodes.length)) {
      this.fail(type, seq, `replaces [${start}, ${end}) outside the surface of ${this.nodes.length} messages`)
    }
    const listed = new Set(sourceEventSeqs)
    for (const source of listed) {
      if (source >= seq) this.fail(type, seq, `lists source seq ${source}, which is not an earlier event`)
    }
    for (let i = start; i < end; i++) {
      const nodeSeq = this.nodeSeqs[i]
      if (nodeSeq !== undefined && !listed.has(nodeSeq)) {
        this.fail(
          type,
          seq,
          `shadows surface node ${i} (seq ${nodeSeq}) but sourceEventSeqs does not list it`,
        )
      }
    }
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
