/** What the event list marks: invariant violations, repair closers and inbox activity. */
import { checkSessionLog } from 'dsh-invariants'
import type { SessionEvent } from 'dsh-session'
import type { ViolationView } from './types.ts'

const REPAIR_CODES = new Set(['TOOL_OUTCOME_UNKNOWN', 'TOOL_NOT_STARTED'])

/** Every violation `checkSessionLog` finds, placed at the index of its event when it names one. */
export function violations(events: readonly SessionEvent[]): ViolationView[] {
  return checkSessionLog(events).map((v) => ({
    check: v.check,
    message: v.message,
    ...(v.index === undefined ? {} : { index: v.index }),
  }))
}

/**
 * Indices of repair closers: each `turn/end {interrupted}` (only repair writes that reason) and the
 * run right before it of `step/end` and `tool/result` events whose error code is a repair code.
 */
export function repairClosers(events: readonly SessionEvent[]): number[] {
  const out: number[] = []
  events.forEach((event, index) => {
    if (
      event.type !== 'turn/end' ||
      (event.data as { reason: { kind: string } }).reason.kind !== 'interrupted'
    )
      return
    const run = [index]
    for (let i = index - 1; i >= 0; i--) {
      const before = events[i] as SessionEvent
      const code = (before.data as { error?: { code: string } }).error?.code
      if (
        before.type === 'step/end' ||
        (before.type === 'tool/result' && code !== undefined && REPAIR_CODES.has(code))
      ) {
        run.push(i)
      } else break
    }
    out.push(...run.reverse())
  })
  return out
}

/** Indices of inbox events (`agent/inbox/...`): sends, claims and removals. */
export function inboxEvents(events: readonly SessionEvent[]): number[] {
  const out: number[] = []
  events.forEach((event, index) => {
    if (event.type.startsWith('agent/inbox/')) out.push(index)
  })
  return out
}

/**
 * Indices of `user/message` events that did not come through the inbox: `inject()`, contexts from tool
 * post-processing, messages a pre-step listener added. A message is inbox-borne when its id was
 * inserted by an earlier `agent/inbox/spliced`.
 */
export function injectedMessages(events: readonly SessionEvent[]): number[] {
  const queued = new Set<string>()
  const out: number[] = []
  events.forEach((event, index) => {
    if (event.type === 'agent/inbox/spliced') {
      for (const message of (event.data as { inserted?: readonly { id: string }[] }).inserted ?? [])
        queued.add(message.id)
    } else if (event.type === 'user/message' && !queued.has((event.data as { id: string }).id))
      out.push(index)
  })
  return out
}
