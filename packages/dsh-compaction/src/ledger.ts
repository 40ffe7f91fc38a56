/**
 * The per-session fold dsh-compaction reads: the seq behind each surface node (what a replace must
 * list as its sources), the last provider-reported usage still valid as an anchor, and the open
 * compaction, if any. Incremental: each event is read once per session, on the next query after it.
 */
import { type Session, type SessionEvent, surfaceMessage } from 'dsh-session'
import type { CompactionStartData } from './types.ts'

/** Usage reported for a request whose history was surface nodes `[0, nodeIndex)`. */
export interface UsageAnchor {
  /** input + cache read + cache write tokens of that request. */
  readonly tokens: number
  readonly nodeIndex: number
}

/** A `compaction/start` without its `compaction/end`. */
export interface OpenCompaction {
  readonly seq: number
  readonly data: CompactionStartData
}

/** The folded state of one session. */
export class Ledger {
  /** The seq of the event behind each surface node, in surface order. */
  readonly nodeSeqs: number[] = []
  anchor: UsageAnchor | undefined
  open: OpenCompaction | undefined
  /** How many compactions started in this log. */
  started = 0
  private next = 0

  /**
   * Folds the events appended since the last call, reading them one at a time (no snapshot of the
   * whole log) and passing each run of chunk entries unread: they change nothing here.
   */
  update(session: Session): this {
    const end = session.seq
    for (let seq = session.nonChunkSeq(this.next); seq < end; seq = session.nonChunkSeq(seq + 1)) {
      const event = session.eventAt(seq)
      if (event !== undefined) this.apply(event)
    }
    this.next = end
    return this
  }

  private apply(event: SessionEvent): void {
    switch (event.type) {
      case 'request/header':
        this.anchor = undefined
        return
      case 'assistant/message': {
        const usage = event.data.usage
        if (usage !== undefined) {
          const tokens = usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)
          this.anchor = { tokens, nodeIndex: this.nodeSeqs.length }
        }
        break
      }
      case 'compaction/start':
        this.open = { seq: event.seq, data: event.data }
        this.started++
        return
      case 'compaction/end':
        this.open = undefined
        return
      default:
        break
    }
    if (surfaceMessage(event.type, event.data) === undefined) return
    const surface = event.surface
    if (surface === undefined || surface.op === 'append') {
      this.nodeSeqs.push(event.seq)
    } else {
      this.nodeSeqs.splice(surface.start, surface.end - surface.start, event.seq)
      this.anchor = undefined
    }
  }
}

const ledgers = new WeakMap<Session, Ledger>()

/** The session's ledger, brought up to date with its log. */
export function ledgerOf(session: Session): Ledger {
  let ledger = ledgers.get(session)
  if (ledger === undefined) {
    ledger = new Ledger()
    ledgers.set(session, ledger)
  }
  return ledger.update(session)
}
