/** The right panel: every event (virtualized), marks for violations, repairs and inbox, and the selected event. */
import { useMemo } from 'preact/hooks'
import type { ViewData, ViolationView } from '../data/types.ts'
import { eventSummary } from './format.ts'
import { VirtualList } from './virtual-list.tsx'

/** Props of `EventPanel`. */
export interface EventPanelProps {
  readonly data: ViewData
  readonly selected: number | undefined
  readonly scrollTo: number | undefined
  readonly onEvent: (index: number) => void
}

/** The event list and, under it, the selected event's JSON and any violation at it. */
export function EventPanel({ data, selected, scrollTo, onEvent }: EventPanelProps) {
  const marks = useMemo(() => {
    const violationsAt = new Map<number, ViolationView[]>()
    for (const v of data.violations) {
      if (v.index === undefined) continue
      violationsAt.set(v.index, [...(violationsAt.get(v.index) ?? []), v])
    }
    return { violationsAt, repairs: new Set(data.repairs), inbox: new Set(data.inbox) }
  }, [data])
  const t0 = data.events[0]?.time ?? 0
  const row = (i: number) => {
    const event = data.events[i]
    if (event === undefined) return null
    const classes = [
      'event',
      marks.violationsAt.has(i) ? 'violation' : '',
      marks.repairs.has(i) ? 'repair' : '',
      marks.inbox.has(i) ? 'inbox' : '',
      selected === i ? 'selected' : '',
    ].join(' ')
    return (
      <button type="button" class={classes} data-testid={`event-${event.seq}`} onClick={() => onEvent(i)}>
        <span class="seq">{event.seq}</span>
        <span class="time">+{event.time - t0}ms</span>
        <span class="type">{event.type}</span>
        <span class="summary">
          {marks.repairs.has(i) ? '[repair] ' : ''}
          {marks.violationsAt.has(i) ? '⚠ ' : ''}
          {eventSummary(event)}
        </span>
      </button>
    )
  }
  const event = selected === undefined ? undefined : data.events[selected]
  const here = selected === undefined ? [] : (marks.violationsAt.get(selected) ?? [])
  return (
    <div class="events">
      <VirtualList
        count={data.events.length}
        rowHeight={22}
        row={row}
        scrollTo={scrollTo}
        testId="event-list"
      />
      <div class="detail" data-testid="event-detail">
        {event === undefined ? (
          <div class="empty">select an event</div>
        ) : (
          <>
            <h3>
              seq {event.seq} · {event.type}
              {marks.repairs.has(selected ?? -1) ? ' · repair closer' : ''}
            </h3>
            {here.map((v) => (
              <div class="violation-note" data-testid="violation-note" key={v.message}>
                {v.check}: {v.message}
              </div>
            ))}
            <pre>{JSON.stringify(event, null, 2)}</pre>
          </>
        )}
      </div>
    </div>
  )
}
