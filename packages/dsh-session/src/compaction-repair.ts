/**
 * Crash repair for a compaction (the catalog's `compaction/*` events, written by dsh-compaction): a `compaction/start` with no `compaction/end` at the end of a log
 * (the process died during the summarizing call or between the compaction's appends). Repair leaves
 * the surface as before or as after the compaction, never a mix.
 */
import { surfaceMessage } from './derive.ts'
import type { RepairEvent } from './repair-closers.ts'
import type { CompactionStartData, SessionEvent } from './types.ts'

/** The prefix of the ids of the surface messages compaction `id` writes. */
export function compactionMessagePrefix(id: string): string {
  return `${id}:`
}

/**
 * The events that close an open compaction at the end of `events`: when every surface replace it
 * announced (`replaces`) was appended, only `compaction/end {completed, repaired}`; otherwise one
 * replace per appended one that puts the original message back (in reverse order; skipping those a
 * rollback cut short by a fork already put back), then `compaction/end {interrupted, repaired}`. Empty when no compaction is open.
 */
export function compactionClosers(events: readonly SessionEvent[]): RepairEvent[] {
  let start: { readonly seq: number; readonly data: CompactionStartData } | undefined
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]
    if (event === undefined) continue
    if (event.type === 'compaction/end') return []
    if (event.type === 'compaction/start') {
      start = { seq: event.seq, data: event.data }
      break
    }
  }
  if (start === undefined) return []
  const { id, replaces } = start.data
  const prefix = compactionMessagePrefix(id)
  const written: SessionEvent[] = []
  // Seqs of written replaces a rollback already put back (a fork can cut a rollback half way).
  const restored = new Set<number>()
  for (let i = start.seq + 1; i < events.length; i++) {
    const event = events[i]
    if (event?.surface?.op !== 'replace') continue
    const message = surfaceMessage(event.type, event.data)
    if (message?.id.startsWith(prefix) === true) written.push(event)
    else for (const source of event.surface.sourceEventSeqs) restored.add(source)
  }
  if (written.length === replaces) {
    return [{ type: 'compaction/end', data: { id, outcome: 'completed', repaired: true } }]
  }
  const closers: RepairEvent[] = []
  for (const event of written.reverse()) {
    if (restored.has(event.seq)) continue
    const surface = event.surface
    if (surface?.op !== 'replace' || surface.end - surface.start !== 1) continue
    const sourceSeq = surface.sourceEventSeqs[0]
    const source = sourceSeq === undefined ? undefined : events[sourceSeq]
    const original = source === undefined ? undefined : surfaceMessage(source.type, source.data)
    if (original === undefined || original.role !== 'user') continue
    closers.push({
      type: 'user/message',
      data: original,
      surface: { op: 'replace', start: surface.start, end: surface.start + 1, sourceEventSeqs: [event.seq] },
    })
  }
  closers.push({ type: 'compaction/end', data: { id, outcome: 'interrupted', repaired: true } })
  return closers
}
