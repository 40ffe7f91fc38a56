/** The middle panel: one request exactly as sent, each message linked to its event, and the diff. */
import type { Message } from 'dsh-llm'
import type { RequestHeader } from 'dsh-session'
import { useMemo, useState } from 'preact/hooks'
import { requestMessages } from '../data/messages.ts'
import type { MessageSource, RequestView, ViewData } from '../data/types.ts'
import { usageText } from './format.ts'

const SHOWN_KEPT = 3

function DiffBox({ request, onRequest }: { request: RequestView; onRequest: (number: number) => void }) {
  const d = request.diff
  if (d.previous === undefined) return <div class="diff">first request: {d.added} messages</div>
  const reasons = [
    ...(d.systemChanged ? ['system prompt changed'] : []),
    ...(d.toolsChanged ? ['tools changed'] : []),
    ...(d.removed > 0
      ? [`${d.removed} message(s) of request #${d.previous} changed or dropped from #${d.kept}`]
      : []),
  ]
  return (
    <div class={`diff ${d.cacheBreak ? 'break' : ''}`} data-testid="diff">
      since{' '}
      <button
        type="button"
        class="link"
        data-testid="previous-request"
        onClick={() => onRequest(d.previous ?? 0)}
      >
        request #{d.previous}
      </button>
      : kept {d.kept}, added {d.added}
      {d.configChanged.length > 0 ? `, config changed: ${d.configChanged.join(', ')}` : ''}
      {d.cacheBreak ? <strong> · prefix-cache break: {reasons.join('; ')}</strong> : ' · prefix kept'}
    </div>
  )
}

function sourceLabel(data: ViewData, source: MessageSource): string {
  if (source.kind === 'inline') return 'not carried verbatim by any event'
  const event = data.events[source.index]
  const where = source.prefixIndex === undefined ? '' : ` messagePrefix[${source.prefixIndex}]`
  return `seq ${event?.seq} ${event?.type}${where}`
}

function MessageRow(props: {
  data: ViewData
  position: number
  message: Message
  source: MessageSource
  state: 'kept' | 'new'
  onEvent: (index: number) => void
}) {
  const { data, position, message, source, state, onEvent } = props
  return (
    <div class={`message ${state}`} data-testid={`message-${position}`}>
      <div class="message-head">
        #{position} {message.role} ({message.source.kind}) {state === 'new' ? '· new' : ''}
        {source.kind === 'event' ? (
          <button
            type="button"
            class="link"
            data-testid={`message-link-${position}`}
            onClick={() => onEvent(source.index)}
          >
            ← {sourceLabel(data, source)}
          </button>
        ) : (
          <span class="inline-note"> {sourceLabel(data, source)}</span>
        )}
        {source.kind === 'event' && source.chunks !== undefined ? (
          <button type="button" class="link" onClick={() => onEvent(source.chunks?.[0] ?? source.index)}>
            streamed in seq {data.events[source.chunks[0]]?.seq}–{data.events[source.chunks[1]]?.seq}
          </button>
        ) : null}
      </div>
      <pre>{JSON.stringify(message.content, null, 2)}</pre>
    </div>
  )
}

/** Props of `RequestPanel`. */
export interface RequestPanelProps {
  readonly data: ViewData
  readonly number: number
  readonly onEvent: (index: number) => void
  readonly onRequest: (number: number) => void
}

/** One request: call config, system prompt, tools, diff since the previous request, every message. */
export function RequestPanel({ data, number, onEvent, onRequest }: RequestPanelProps) {
  const request = data.requests[number]
  const [showKept, setShowKept] = useState(false)
  const messages = useMemo(() => requestMessages(data.events, data.requests, number), [data, number])
  if (request === undefined) return <div class="empty">no request #{number}</div>
  const header = (data.events[request.header]?.data as { header?: RequestHeader } | undefined)?.header
  if (header === undefined)
    return (
      <div class="empty">
        request #{number}: no header at index {request.header}
      </div>
    )
  const kept = request.diff.kept
  const hidden = showKept ? 0 : Math.max(0, kept - SHOWN_KEPT)
  return (
    <div class="request" data-testid="request-panel">
      <h2>
        Request #{number} · turn {request.turn} step {request.step} · {header.config.provider}/
        {header.config.model}
      </h2>
      <DiffBox request={request} onRequest={onRequest} />
      <div class="meta">
        finish {request.finish ?? '—'} · {usageText(request.usage)} ·{' '}
        <button type="button" class="link" onClick={() => onEvent(request.header)}>
          header seq {data.events[request.header]?.seq}
        </button>{' '}
        ·{' '}
        <button type="button" class="link" onClick={() => onEvent(request.start)}>
          response from seq {data.events[request.start]?.seq}
        </button>
      </div>
      <details>
        <summary>call config</summary>
        <pre>{JSON.stringify(header.config, null, 2)}</pre>
      </details>
      {header.system ? (
        <details open>
          <summary>system</summary>
          <pre>{header.system}</pre>
        </details>
      ) : null}
      {header.tools && header.tools.length > 0 ? (
        <details>
          <summary>tools: {header.tools.map((t) => t.name).join(', ')}</summary>
          <pre>{JSON.stringify(header.tools, null, 2)}</pre>
        </details>
      ) : null}
      {hidden > 0 ? (
        <button type="button" class="link" onClick={() => setShowKept(true)}>
          show {hidden} earlier kept messages
        </button>
      ) : null}
      {messages.slice(hidden).map(({ message, source }, i) => (
        <MessageRow
          key={hidden + i}
          data={data}
          position={hidden + i}
          message={message}
          source={source}
          state={hidden + i < kept ? 'kept' : 'new'}
          onEvent={onEvent}
        />
      ))}
    </div>
  )
}
