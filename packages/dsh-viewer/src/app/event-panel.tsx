/** The right panel: every event (virtualized), marks for violations, repairs and inbox, and the selected event. */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { CompactionView, ViewData, ViolationView } from '../data/types.ts'
import { eventSummary } from './format.ts'
import { VirtualList } from './virtual-list.tsx'

/** Props of `EventPanel`. */
export interface EventPanelProps {
  readonly data: ViewData
  readonly selected: number | undefined
  readonly scrollTo: number | undefined
  readonly onEvent: (index: number) => void
}

/** Which events the list shows. */
type Filter = 'all' | 'inbox' | 'violations' | 'repairs' | 'compactions'

function indicesFor(data: ViewData, filter: Filter): readonly number[] | undefined {
  switch (filter) {
    case 'all':
      return undefined
    case 'inbox':
      return [...data.inbox, ...data.injected].sort((a, b) => a - b)
    case 'repairs':
      return data.repairs
    case 'compactions':
      return data.compactions.flatMap((c) => [
        c.start,
        ...c.replaces,
        ...(c.end === undefined ? [] : [c.end]),
      ])
    case 'violations':
      return [...new Set(data.violations.flatMap((v) => (v.index === undefined ? [] : [v.index])))].sort(
        (a, b) => a - b,
      )
  }
}

/** The event list (all, or only inbox / violation / repair events) and the selected event's JSON. */
export function EventPanel({ data, selected, scrollTo, onEvent }: EventPanelProps) {
  const [filter, setFilter] = useState<Filter>('all')
  const shown = useMemo(() => indicesFor(data, filter), [data, filter])
  // Following a link to an event the filter hides shows every event again.
  const followed = useRef(scrollTo)
  useEffect(() => {
    if (followed.current === scrollTo) return
    followed.current = scrollTo
    if (scrollTo !== undefined && shown !== undefined && !shown.includes(scrollTo)) setFilter('all')
  }, [scrollTo, shown])
  const marks = useMemo(() => {
    const violationsAt = new Map<number, ViolationView[]>()
    for (const v of data.violations) {
      if (v.index === undefined) continue
      violationsAt.set(v.index, [...(violationsAt.get(v.index) ?? []), v])
    }
    return {
      violationsAt,
      repairs: new Set(data.repairs),
      inbox: new Set(data.inbox),
      injected: new Set(data.injected),
      compactionAt: new Map(data.compactions.map((c) => [c.start, c])),
    }
  }, [data])
  const t0 = data.events[0]?.time ?? 0
  const row = (position: number) => {
    const i = shown === undefined ? position : (shown[position] ?? -1)
    const event = data.events[i]
    if (event === undefined) return null
    const classes = [
      'event',
      marks.violationsAt.has(i) ? 'violation' : '',
      marks.repairs.has(i) ? 'repair' : '',
      marks.inbox.has(i) ? 'inbox' : '',
      marks.injected.has(i) ? 'injected' : '',
      selected === i ? 'selected' : '',
    ].join(' ')
    return (
      <button type="button" class={classes} data-testid={`event-${event.seq}`} onClick={() => onEvent(i)}>
        <span class="seq">{event.seq}</span>
        <span class="time">+{event.time - t0}ms</span>
        <span class="type">{event.type}</span>
        <span class="summary">
          {marks.repairs.has(i) ? '[repair] ' : ''}
          {marks.injected.has(i) ? '[injected] ' : ''}
          {marks.compactionAt.has(i) ? '[compaction] ' : ''}
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
      <div class="filters">
        {(['all', 'inbox', 'violations', 'repairs', 'compactions'] as const).map((f) => (
          <button
            type="button"
            key={f}
            class={filter === f ? 'on' : ''}
            data-testid={`filter-${f}`}
            onClick={() => setFilter(f)}
          >
            {f} ({f === 'all' ? data.events.length : (indicesFor(data, f)?.length ?? 0)})
          </button>
        ))}
      </div>
      <VirtualList
        count={shown === undefined ? data.events.length : shown.length}
        rowHeight={22}
        row={row}
        scrollTo={scrollTo === undefined || shown === undefined ? scrollTo : position(shown, scrollTo)}
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
            <CompactionNote view={marks.compactionAt.get(selected ?? -1)} />
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

/** What a compaction did, shown on its `compaction/start` event. */
function CompactionNote({ view }: { readonly view: CompactionView | undefined }) {
  if (view === undefined) return null
  const after = view.tokensAfter === undefined ? '?' : String(view.tokensAfter)
  return (
    <div class="compaction-note" data-testid="compaction-note">
      {view.id}: {view.strategy} ({view.trigger}) · {view.outcome ?? 'open'}
      {view.repaired === true ? ' (repaired)' : ''} · replaced {view.replaced} message(s) with{' '}
      {view.replaces.length} · tokens {view.tokensBefore} → {after}
      {view.reason === undefined ? '' : ` · ${view.reason}`}
      {view.summary === undefined ? null : <pre>{view.summary}</pre>}
    </div>
  )
}

/** The position of event `index` in the sorted `shown` list, or of the nearest event after it. */
function position(shown: readonly number[], index: number): number {
  let low = 0
  let high = shown.length
  while (low < high) {
    const mid = (low + high) >> 1
    if ((shown[mid] ?? 0) < index) low = mid + 1
    else high = mid
  }
  return low
}
