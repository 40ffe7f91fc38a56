/**
 * The compactions of a log (dsh-compaction's `compaction/*` events), read by type name so the viewer
 * needs no dependency on that package: what each replaced, its summary, and tokens before and after.
 */
import type { SessionEvent } from 'dsh-session'
import type { CompactionView } from './types.ts'

interface StartData {
  readonly id: string
  readonly trigger: string
  readonly strategy: string
  readonly tokensBefore: number
  readonly replaces: number
}
interface EndData {
  readonly id: string
  readonly outcome: string
  readonly tokensAfter?: number
  readonly reason?: string
  readonly repaired?: boolean
}

function textOf(data: unknown): string {
  const content = (data as { content?: readonly { type: string; text?: string }[] }).content ?? []
  return content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('')
}

/** One view per `compaction/start`, in log order, completed by its surface replaces and its end. */
export function compactionViews(events: readonly SessionEvent[]): CompactionView[] {
  const out: CompactionView[] = []
  let open:
    | { view: CompactionView & { replaces: number[]; replaced: number; summary?: string }; id: string }
    | undefined
  events.forEach((event, index) => {
    const type: string = event.type
    if (type === 'compaction/start') {
      const data = event.data as unknown as StartData
      const view = {
        id: data.id,
        start: index,
        trigger: data.trigger,
        strategy: data.strategy,
        tokensBefore: data.tokensBefore,
        announced: data.replaces,
        replaces: [] as number[],
        replaced: 0,
      }
      out.push(view)
      open = { view, id: data.id }
      return
    }
    if (open === undefined) return
    const surface = event.surface
    if (surface?.op === 'replace' && type === 'user/message') {
      const id = (event.data as { id: string }).id
      if (!id.startsWith(`${open.id}:`)) return
      open.view.replaces.push(index)
      open.view.replaced += surface.end - surface.start
      if (id === `${open.id}:summary`) open.view.summary = textOf(event.data)
      return
    }
    if (type === 'compaction/end') {
      const data = event.data as unknown as EndData
      const view = open.view as { -readonly [K in keyof CompactionView]: CompactionView[K] }
      view.end = index
      view.outcome = data.outcome
      if (data.tokensAfter !== undefined) view.tokensAfter = data.tokensAfter
      if (data.reason !== undefined) view.reason = data.reason
      if (data.repaired === true) view.repaired = true
      open = undefined
    }
  })
  return out
}
