/**
 * The transcript printer: a plugin that listens to `session/event` and `session/chunk` and prints what
 * happens as it is logged — turns, steps, messages, streamed text as each delta arrives, tool calls and
 * results, and how each turn ended. It prints no ids, times or durations, so a scripted run prints the same every time.
 */
import type { Context } from 'cordis'
import type {} from 'dsh-agent-loop'
import {
  type ContentBlock,
  type MessageSource,
  messageText,
  type StreamChunk,
  type TurnEndReason,
} from 'dsh-llm'
import type { RequestHeader, SessionEvent } from 'dsh-session'

const STEP = '  '
const ITEM = '    '
const RESULT_LINES = 4

/** Where the transcript goes, and the few lines the demo prints itself. */
export class Transcript {
  /** True while a streamed text line is open (a delta was written, its block has not ended). */
  private open = false
  private readonly toolNames = new Map<string, string>()
  /** How many `agent/error` notifications were printed. */
  errors = 0

  constructor(private readonly write: (text: string) => void) {}

  /** Prints one line (closing a streamed line first). */
  line(text = ''): void {
    this.close()
    this.write(`${text.trimEnd()}\n`)
  }

  /** The plugin that prints every event of every session of the context it is mounted on. */
  readonly plugin = {
    name: 'transcript',
    apply: (ctx: Context) => {
      ctx.on('session/event', (_session, event) => this.print(event))
      // Chunks come on their own channel, in log order with the events.
      ctx.on('session/chunk', (_session, _seq, _time, _turn, _step, chunk) => this.printChunk(chunk))
      ctx.on('agent/error', (_agent, error) => {
        this.errors++
        this.line(`${ITEM}! agent error ${error.code}: ${error.message}`)
      })
    },
  }

  private close(): void {
    if (!this.open) return
    this.open = false
    this.write('\n')
  }

  private stream(label: string, text: string): void {
    if (!this.open) {
      this.write(`${ITEM}${label}: `)
      this.open = true
    }
    this.write(text.replaceAll('\n', `\n${ITEM}  `))
  }

  private printChunk(chunk: StreamChunk): void {
    if (chunk.type === 'text-delta') this.stream('assistant', chunk.text)
    else if (chunk.type === 'reasoning-delta') this.stream('thinking', chunk.text)
    else if (chunk.type === 'block-end') this.close()
  }

  private print(event: SessionEvent): void {
    switch (event.type) {
      case 'turn/start':
        this.line()
        this.line(`turn ${event.data.turn} (${event.data.trigger.kind})`)
        return
      case 'step/start':
        this.line(`${STEP}step ${event.data.step}`)
        return
      case 'user/message':
        this.line(`${ITEM}${who(event.data.source)}: ${messageText(event.data)}`)
        return
      case 'request/header':
        this.line(`${ITEM}request header (${event.data.reason}): ${describeHeader(event.data.header)}`)
        return
      case 'assistant/message':
        if (event.data.interrupted === true) {
          const kept = messageText(event.data.message).length
          this.line(
            `${ITEM}[cancelled mid-stream: the ${kept} characters shown were kept as an interrupted message]`,
          )
        }
        return
      case 'tool/call':
        this.toolNames.set(event.data.callId, event.data.name)
        this.line(`${ITEM}→ ${event.data.name} ${event.data.arguments}`)
        return
      case 'tool/result': {
        const block = event.data.message.content[0]
        const name = this.toolNames.get(block.toolCallId) ?? 'tool'
        const marker = block.isError === true ? ' (error)' : ''
        const [first = '', ...rest] = resultLines(block.content)
        this.line(`${ITEM}← ${name}${marker}: ${first}`)
        for (const more of rest) this.line(`${ITEM}  ${more}`)
        return
      }
      case 'turn/end':
        this.line(`${STEP}turn ${event.data.turn} ended: ${describeReason(event.data.reason)}`)
        return
      default:
        // Bookkeeping (`step/end`, inbox splices, ...) and plugins' own events are not printed.
        return
    }
  }
}

/** Who a user-role message comes from, as the transcript names it. */
function who(source: MessageSource): string {
  switch (source.kind) {
    case 'user':
      return 'you'
    case 'plugin':
      return `plugin ${source.plugin}`
    default:
      // Open union: sources added by other packages print their kind.
      return source.kind
  }
}

function describeHeader(header: RequestHeader): string {
  const parts = [`${header.config.provider}/${header.config.model}`]
  if (header.system !== undefined) parts.push('system prompt')
  parts.push(`${header.tools?.length ?? 0} tools`)
  const prefix = header.messagePrefix ?? []
  if (prefix.length > 0)
    parts.push(`session prefix of ${prefix.length} message${prefix.length === 1 ? '' : 's'}`)
  return parts.join(', ')
}

function describeReason(reason: TurnEndReason): string {
  switch (reason.kind) {
    case 'aborted':
      return `aborted (${reason.cause})`
    case 'error':
      return `error (${reason.failure.code}: ${reason.failure.message})`
    default:
      // Open union: `completed`, `blocked`, `max-tokens`, `max-steps`, `interrupted`, and plugins' own.
      return reason.kind
  }
}

/** A tool result's text, cut to a few lines for the transcript. */
function resultLines(content: readonly ContentBlock[]): string[] {
  const lines = messageText({ content }).replace(/\n+$/, '').split('\n')
  if (lines.length <= RESULT_LINES) return lines
  return [...lines.slice(0, RESULT_LINES), `… (${lines.length - RESULT_LINES} more lines)`]
}
