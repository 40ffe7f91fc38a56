/** Small formatting helpers for the page. */
import type { Usage } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'

/** `850 ms`, `1.24 s`, `3 min 5 s`; `…` when either end is missing. */
export function duration(start: number | undefined, end: number | undefined): string {
  if (start === undefined || end === undefined) return '…'
  const ms = end - start
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
}

/** `in 120 · out 7 · cache 90 · reasoning 3`, zero optional counts left out. */
export function usageText(usage: Usage | undefined): string {
  if (usage === undefined) return 'no usage'
  const parts = [`in ${usage.inputTokens}`, `out ${usage.outputTokens}`]
  if (usage.cacheReadTokens) parts.push(`cache ${usage.cacheReadTokens}`)
  if (usage.cacheWriteTokens) parts.push(`cache write ${usage.cacheWriteTokens}`)
  if (usage.reasoningTokens) parts.push(`reasoning ${usage.reasoningTokens}`)
  return parts.join(' · ')
}

function clip(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ')
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

function blocksText(content: unknown): string {
  if (!Array.isArray(content)) return ''
  return content
    .map((b: { type?: string; text?: string; name?: string }) =>
      b.type === 'text' || b.type === 'reasoning'
        ? (b.text ?? '')
        : b.type === 'tool-call'
          ? `${b.name}(…)`
          : `[${b.type}]`,
    )
    .join(' ')
}

/** A one-line summary of an event for the event list. */
export function eventSummary(event: SessionEvent): string {
  const d = event.data as Record<string, unknown>
  switch (event.type) {
    case 'turn/start':
      return `turn ${d.turn} (${(d.trigger as { kind: string }).kind})`
    case 'turn/end':
      return `turn ${d.turn}: ${(d.reason as { kind: string }).kind}`
    case 'step/start':
    case 'step/end':
      return `turn ${d.turn} step ${d.step}`
    case 'user/message':
      return `${(d.source as { kind: string }).kind}: ${clip(blocksText(d.content))}`
    case 'assistant/chunk': {
      const chunk = d.chunk as {
        type: string
        text?: string
        argumentsDelta?: string
        reason?: { kind: string }
      }
      return `${chunk.type} ${clip(chunk.text ?? chunk.argumentsDelta ?? chunk.reason?.kind ?? '', 60)}`
    }
    case 'assistant/message':
      return (
        clip(blocksText((d.message as { content: unknown }).content)) +
        (d.interrupted ? ' (interrupted)' : '')
      )
    case 'tool/call':
      return `${d.name} ${clip(String(d.arguments), 60)}`
    case 'tool/result': {
      const block = (d.message as { content: [{ toolCallId: string; content: unknown }] }).content[0]
      return `${block.toolCallId}: ${clip(blocksText(block.content), 60)}`
    }
    case 'request/retry':
      return `attempt ${d.attempt} failed (${(d.failure as { code: string }).code}), again in ${d.delayMs} ms`
    case 'request/header':
      return `${d.reason}`
    case 'agent/inbox/spliced': {
      const inserted = (d.inserted as unknown[] | undefined)?.length ?? 0
      const removed = (d.removedCount as number | undefined) ?? 0
      const what =
        inserted > 0
          ? `+${inserted} queued`
          : d.outcome === undefined
            ? `${removed} claimed`
            : `${removed} ${d.outcome}`
      return `${d.target}: ${what}`
    }
    default:
      return clip(JSON.stringify(d), 80)
  }
}
