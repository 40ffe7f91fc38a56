/** The page: header with totals and violations, timeline | request | events. State lives in the URL hash. */
import { useEffect, useState } from 'preact/hooks'
import type { ViewData } from '../data/types.ts'
import { addUsage, ZERO_USAGE } from '../data/usage.ts'
import { EventPanel } from './event-panel.tsx'
import { usageText } from './format.ts'
import { RequestPanel } from './request-panel.tsx'
import { Timeline } from './timeline.tsx'

interface Selection {
  readonly request?: number
  readonly event?: number
}

function readHash(): Selection {
  const params = new URLSearchParams(location.hash.slice(1))
  const request = params.get('request')
  const event = params.get('event')
  return {
    ...(request === null ? {} : { request: Number(request) }),
    ...(event === null ? {} : { event: Number(event) }),
  }
}

function writeHash(selection: Selection): void {
  const params = new URLSearchParams()
  if (selection.request !== undefined) params.set('request', String(selection.request))
  if (selection.event !== undefined) params.set('event', String(selection.event))
  history.replaceState(null, '', `#${params.toString()}`)
}

/** The whole viewer for one session's view data. */
export function App({ data }: { data: ViewData }) {
  const [selection, setSelection] = useState<Selection>(readHash)
  const [scrollTo, setScrollTo] = useState<number | undefined>(selection.event)
  useEffect(() => writeHash(selection), [selection])
  const showEvent = (index: number) => {
    setSelection((s) => ({ ...s, event: index }))
    setScrollTo(index)
  }
  const openRequest = (number: number) => setSelection((s) => ({ ...s, request: number }))
  const total = data.turns.reduce((sum, t) => addUsage(sum, t.usage), ZERO_USAGE)
  const firstViolation = data.violations.find((v) => v.index !== undefined)
  return (
    <div class="app">
      <header>
        <strong title={data.file}>{data.file.split(/[\\/]/).pop()}</strong> · session {data.sessionId ?? '?'}{' '}
        · {data.events.length} events · {data.turns.length} turns · {data.requests.length} requests ·{' '}
        {usageText(total)} ·{' '}
        {data.violations.length === 0 ? (
          <span class="ok">invariants clean</span>
        ) : (
          <button
            type="button"
            class="link bad"
            data-testid="violations"
            onClick={() => firstViolation?.index !== undefined && showEvent(firstViolation.index)}
          >
            ⚠ {data.violations.length} violation(s)
          </button>
        )}
        {data.repairs.length > 0 ? (
          <span class="repair-note"> · {data.repairs.length} repair closers</span>
        ) : null}
        {data.compactions.length > 0 ? (
          <span data-testid="compactions"> · {data.compactions.length} compaction(s)</span>
        ) : null}
        {data.tornLine !== undefined ? (
          <span class="bad" data-testid="torn-line">
            {' '}
            · line {data.tornLine} is torn (cut short) and was skipped
          </span>
        ) : null}
        {data.reconstructionError ? (
          <span class="bad"> · requests not reconstructed: {data.reconstructionError}</span>
        ) : null}
      </header>
      <main>
        <section class="timeline-panel">
          <Timeline
            data={data}
            selectedRequest={selection.request}
            onRequest={openRequest}
            onEvent={showEvent}
          />
        </section>
        <section class="request-panel">
          {selection.request === undefined ? (
            <div class="empty">pick a request in the timeline</div>
          ) : (
            <RequestPanel
              data={data}
              number={selection.request}
              onEvent={showEvent}
              onRequest={openRequest}
            />
          )}
        </section>
        <section class="event-panel">
          <EventPanel data={data} selected={selection.event} scrollTo={scrollTo} onEvent={showEvent} />
        </section>
      </main>
    </div>
  )
}
