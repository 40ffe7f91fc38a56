/** The left panel: turns → steps → requests and tool calls, each with a bar on the session's time axis. */
import { useMemo } from 'preact/hooks'
import type { StepView, ToolView, TurnView, ViewData } from '../data/types.ts'
import { duration, usageText } from './format.ts'
import { VirtualList } from './virtual-list.tsx'

type Row =
  | { readonly kind: 'turn'; readonly turn: TurnView }
  | { readonly kind: 'step'; readonly step: StepView }
  | { readonly kind: 'request'; readonly number: number }
  | { readonly kind: 'tool'; readonly tool: ToolView }

function rowsOf(turns: readonly TurnView[]): Row[] {
  const rows: Row[] = []
  for (const turn of turns) {
    rows.push({ kind: 'turn', turn })
    for (const step of turn.steps) {
      rows.push({ kind: 'step', step })
      for (const number of step.requests) rows.push({ kind: 'request', number })
      for (const tool of step.tools) rows.push({ kind: 'tool', tool })
    }
  }
  return rows
}

/** Props of `Timeline`. */
export interface TimelineProps {
  readonly data: ViewData
  readonly selectedRequest: number | undefined
  readonly onRequest: (number: number) => void
  readonly onEvent: (index: number) => void
}

/** Turns and steps with durations and usage; clicking a request opens it, anything else shows its event. */
export function Timeline({ data, selectedRequest, onRequest, onEvent }: TimelineProps) {
  const rows = useMemo(() => rowsOf(data.turns), [data])
  const t0 = data.events[0]?.time ?? 0
  const span = Math.max(1, (data.events[data.events.length - 1]?.time ?? t0) - t0)
  const bar = (start: number | undefined, end: number | undefined) => {
    const left = (((start ?? t0) - t0) / span) * 100
    const width = Math.max(0.5, (((end ?? start ?? t0) - (start ?? t0)) / span) * 100)
    return (
      <span class="track">
        <span class="bar" style={{ left: `${left}%`, width: `${width}%` }} />
      </span>
    )
  }
  const row = (i: number) => {
    const r = rows[i] as Row
    switch (r.kind) {
      case 'turn':
        return (
          <button
            type="button"
            class={`tl turn ${r.turn.endReason ?? 'open'}`}
            onClick={() => onEvent(r.turn.start)}
          >
            <span class="label">
              Turn {r.turn.turn} · {r.turn.endReason ?? 'open'} · {duration(r.turn.startTime, r.turn.endTime)}{' '}
              · {usageText(r.turn.usage)}
            </span>
            {bar(r.turn.startTime, r.turn.endTime)}
          </button>
        )
      case 'step':
        return (
          <button type="button" class="tl step" onClick={() => onEvent(r.step.start)}>
            <span class="label">
              step {r.step.step} · {duration(r.step.startTime, r.step.endTime)} · {usageText(r.step.usage)}
            </span>
            {bar(r.step.startTime, r.step.endTime)}
          </button>
        )
      case 'request': {
        const request = data.requests[r.number]
        if (request === undefined) return null
        return (
          <button
            type="button"
            class={`tl request ${selectedRequest === r.number ? 'selected' : ''} ${request.diff.cacheBreak ? 'break' : ''}`}
            data-testid={`request-${r.number}`}
            onClick={() => onRequest(r.number)}
          >
            <span class="label">
              request #{r.number} · {request.messageCount} msgs · {request.finish ?? 'no finish'} ·{' '}
              {duration(request.startTime, request.endTime)}
              {request.diff.cacheBreak ? ' · cache break' : ''}
            </span>
            {bar(request.startTime, request.endTime)}
          </button>
        )
      }
      case 'tool':
        return (
          <button
            type="button"
            class={`tl tool ${r.tool.isError ? 'error' : ''}`}
            onClick={() => onEvent(r.tool.call ?? r.tool.result ?? 0)}
            title={`${r.tool.arguments}\n→ ${r.tool.resultText ?? ''}`}
          >
            <span class="label">
              {r.tool.name}({r.tool.arguments}) → {r.tool.isError ? `✗ ${r.tool.errorCode ?? 'error'}` : '✓'}{' '}
              {(r.tool.resultText ?? '').slice(0, 40)} · {duration(r.tool.startTime, r.tool.endTime)}
            </span>
            {bar(r.tool.startTime, r.tool.endTime)}
          </button>
        )
    }
  }
  return <VirtualList count={rows.length} rowHeight={24} row={row} testId="timeline" />
}
