/** The cordis plugin: one `SessionSpans` per session, fed by `session/event`, and the chat span on `llm/stream`. */
import { context, type Tracer, trace } from '@opentelemetry/api'
import type { Context } from 'cordis'
import { loopRequestMark } from 'dsh-llm'
import type {} from 'dsh-session'
import { chatSpan } from './chat-span.ts'
import { SessionSpans } from './session-spans.ts'

/** Configuration of `Telemetry`. */
export interface TelemetryConfig {
  /** The tracer to use; default `trace.getTracer('dsh-otel')` from the global provider. */
  readonly tracer?: Tracer
  /**
   * Record prompts, outputs, tool arguments and tool results on spans (`gen_ai.input.messages`,
   * `gen_ai.output.messages`, `gen_ai.system_instructions`, `gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`, and a failed tool's error message as its span status). Default
   * `false`: spans then carry no content at all — no prompt, output, tool argument or tool result.
   * Every text a span carries is redacted (dsh-llm's `redact`) either way.
   */
  readonly captureContent?: boolean
  /** `gen_ai.agent.name` of the turn spans; default `'dsh'`. */
  readonly agentName?: string
}

/**
 * Emits OpenTelemetry spans for every session of the context: `invoke_agent <agentName>` per turn,
 * `step N` per step under it, `chat <model>` per model request and `execute_tool <name>` per tool call
 * under the step. Attributes follow the GenAI semantic conventions and add `dsh.session.id`,
 * `dsh.turn`, `dsh.step`, `dsh.seq` / `dsh.end_seq` (the log events that opened and closed the span)
 * and, on model requests, `dsh.request.log_length`. Unloading the plugin ends any open spans.
 */
export const Telemetry = {
  name: 'dsh-otel',
  inject: ['llm', 'sessions'],
  apply(ctx: Context, config: TelemetryConfig = {}) {
    const tracer = config.tracer ?? trace.getTracer('dsh-otel')
    const options = {
      tracer,
      agentName: config.agentName ?? 'dsh',
      captureContent: config.captureContent ?? false,
    }
    const sessions = new Map<string, SessionSpans>()
    const spansOf = (id: string) => {
      let spans = sessions.get(id)
      if (spans === undefined) {
        spans = new SessionSpans(id, options)
        sessions.set(id, spans)
      }
      return spans
    }
    ctx.on('session/event', (session, event) => spansOf(session.id).apply(event))
    ctx.on('session/disposed', (session) => {
      sessions.get(session.id)?.endAll()
      sessions.delete(session.id)
    })
    ctx.on('llm/stream', (request, next) => {
      const mark = loopRequestMark(request)
      const sessionId = mark?.sessionId ?? request.sessionId
      const spans = sessionId === undefined ? undefined : spansOf(sessionId)
      const position =
        spans === undefined
          ? undefined
          : {
              sessionId: spans.sessionId,
              ...spans.position(),
              ...(mark === undefined ? {} : { logLength: mark.logLength }),
            }
      const parent = spans?.parentContext() ?? context.active()
      return chatSpan({ tracer, parent, request, position, captureContent: options.captureContent }, next())
    })
    ctx.effect(
      () => () => {
        for (const spans of sessions.values()) spans.endAll()
        sessions.clear()
      },
      'end open spans',
    )
  },
}
