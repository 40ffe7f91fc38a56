/** Turn, step and tool spans of one session, opened and closed by its log events as they commit. */
import { type Context, context, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api'
import { redact } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'
import { Dsh, GenAi, Operation } from './attributes.ts'
import { toolResult } from './content.ts'

interface Open {
  readonly span: Span
  readonly context: Context
}

/** Options shared by every session's tracker. */
export interface SessionSpanOptions {
  readonly tracer: Tracer
  readonly agentName: string
  readonly captureContent: boolean
}

/**
 * Follows one session's events: `turn/start` opens an `invoke_agent` span (child of the context active
 * at that moment), `step/start` a `step N` span under it, `tool/call` an `execute_tool` span under the
 * step; `tool/result`, `step/end` and `turn/end` close them. A `request/retry` becomes a
 * `dsh.request.retry` span event on the step. Spans still open at `turn/end` (a crashed step) are
 * ended with it.
 */
export class SessionSpans {
  private turn: (Open & { readonly number: number }) | undefined
  private step: (Open & { readonly number: number }) | undefined
  private compaction: Open | undefined
  private readonly tools = new Map<string, Span>()

  constructor(
    readonly sessionId: string,
    private readonly options: SessionSpanOptions,
  ) {}

  /** The context a model request of this session should start its span in. */
  parentContext(): Context {
    return this.compaction?.context ?? this.step?.context ?? this.turn?.context ?? context.active()
  }

  /** The open turn and step numbers, for a model request's attributes. */
  position(): { turn?: number; step?: number } {
    return {
      ...(this.turn === undefined ? {} : { turn: this.turn.number }),
      ...(this.step === undefined ? {} : { step: this.step.number }),
    }
  }

  /** Updates the spans for one committed event. Events of other types are ignored. */
  apply(event: SessionEvent): void {
    const data = event.data as { readonly [key: string]: unknown }
    // dsh-compaction's events, by name (this package does not depend on it).
    const type: string = event.type
    if (type === 'compaction/start') {
      this.compactionStart(event.seq, data)
      return
    }
    if (type === 'compaction/end') {
      this.compactionEnd(event.seq, data)
      return
    }
    switch (event.type) {
      case 'turn/start':
        this.turn = this.open(
          `${Operation.INVOKE_AGENT} ${this.options.agentName}`,
          context.active(),
          event.seq,
          {
            [GenAi.OPERATION_NAME]: Operation.INVOKE_AGENT,
            [GenAi.AGENT_NAME]: this.options.agentName,
            [GenAi.CONVERSATION_ID]: this.sessionId,
            [Dsh.TURN]: data.turn as number,
            [Dsh.TURN_TRIGGER]: (data.trigger as { kind: string }).kind,
          },
          data.turn as number,
        )
        return
      case 'step/start':
        this.step = this.open(
          `step ${data.step as number}`,
          this.parentContext(),
          event.seq,
          {
            [Dsh.TURN]: data.turn as number,
            [Dsh.STEP]: data.step as number,
          },
          data.step as number,
        )
        return
      case 'tool/call':
        this.toolCall(event.seq, data)
        return
      case 'tool/result':
        this.toolResult(event.seq, data)
        return
      case 'request/retry': {
        const failure = data.failure as { code: string }
        this.step?.span.addEvent('dsh.request.retry', {
          [Dsh.SEQ]: event.seq,
          'dsh.retry.attempt': data.attempt as number,
          'dsh.retry.delay_ms': data.delayMs as number,
          [GenAi.ERROR_TYPE]: failure.code,
        })
        return
      }
      case 'step/end':
        this.step?.span.setAttribute(Dsh.END_SEQ, event.seq)
        this.step?.span.end()
        this.step = undefined
        return
      case 'turn/end':
        this.turnEnd(
          event.seq,
          data.reason as { kind: string; failure?: { code: string; message: string }; cause?: string },
        )
        return
    }
  }

  /**
   * `compaction/start` opens a `compaction <strategy>` span under the step or turn (or the active
   * context between turns); the summarizing model request, made while it is open, nests under it.
   */
  private compactionStart(seq: number, data: { readonly [key: string]: unknown }): void {
    this.compaction?.span.end()
    const parent = this.step?.context ?? this.turn?.context ?? context.active()
    const span = this.options.tracer.startSpan(
      `compaction ${String(data.strategy)}`,
      {
        attributes: {
          [Dsh.SESSION_ID]: this.sessionId,
          ...this.position(),
          [Dsh.COMPACTION_ID]: String(data.id),
          [Dsh.COMPACTION_TRIGGER]: String(data.trigger),
          [Dsh.COMPACTION_STRATEGY]: String(data.strategy),
          [Dsh.COMPACTION_TOKENS_BEFORE]: Number(data.tokensBefore),
          [Dsh.SEQ]: seq,
        },
      },
      parent,
    )
    this.compaction = { span, context: trace.setSpan(parent, span) }
  }

  private compactionEnd(seq: number, data: { readonly [key: string]: unknown }): void {
    const open = this.compaction
    this.compaction = undefined
    if (open === undefined) return
    const outcome = String(data.outcome)
    open.span.setAttribute(Dsh.END_SEQ, seq)
    open.span.setAttribute(Dsh.COMPACTION_OUTCOME, outcome)
    if (typeof data.tokensAfter === 'number')
      open.span.setAttribute(Dsh.COMPACTION_TOKENS_AFTER, data.tokensAfter)
    if (outcome === 'failed' || outcome === 'interrupted') {
      open.span.setStatus({ code: SpanStatusCode.ERROR, message: String(data.reason ?? outcome) })
    }
    open.span.end()
  }

  /** Ends every open span (the plugin is going away). */
  endAll(): void {
    this.compaction?.span.end()
    this.compaction = undefined
    for (const span of this.tools.values()) span.end()
    this.tools.clear()
    this.step?.span.end()
    this.turn?.span.end()
    this.step = undefined
    this.turn = undefined
  }

  private open<N extends number>(
    name: string,
    parent: Context,
    seq: number,
    attributes: Record<string, string | number>,
    number: N,
  ): Open & { number: N } {
    const span = this.options.tracer.startSpan(
      name,
      { attributes: { [Dsh.SESSION_ID]: this.sessionId, ...attributes, [Dsh.SEQ]: seq } },
      parent,
    )
    return { span, context: trace.setSpan(parent, span), number }
  }

  private toolCall(seq: number, data: { readonly [key: string]: unknown }): void {
    const name = data.name as string
    const span = this.options.tracer.startSpan(
      `${Operation.EXECUTE_TOOL} ${name}`,
      {
        attributes: {
          [GenAi.OPERATION_NAME]: Operation.EXECUTE_TOOL,
          [GenAi.TOOL_NAME]: name,
          [GenAi.TOOL_TYPE]: 'function',
          [GenAi.TOOL_CALL_ID]: data.callId as string,
          [Dsh.SESSION_ID]: this.sessionId,
          [Dsh.TURN]: data.turn as number,
          [Dsh.STEP]: data.step as number,
          [Dsh.SEQ]: seq,
          ...(this.options.captureContent
            ? { [GenAi.TOOL_CALL_ARGUMENTS]: redact(data.arguments as string) }
            : {}),
        },
      },
      this.parentContext(),
    )
    this.tools.set(data.callId as string, span)
  }

  private toolResult(seq: number, data: { readonly [key: string]: unknown }): void {
    const message = data.message as {
      content: readonly [{ toolCallId: string; isError?: boolean; content: [] }]
    }
    const block = message.content[0]
    const span = this.tools.get(block.toolCallId)
    if (span === undefined) return // answered without running (cancelled before it started)
    this.tools.delete(block.toolCallId)
    span.setAttribute(Dsh.END_SEQ, seq)
    const content = this.options.captureContent
    if (content) span.setAttribute(GenAi.TOOL_CALL_RESULT, redact(toolResult(block.content)))
    const error = data.error as { code: string; message: string } | undefined
    if (block.isError === true || error !== undefined) {
      span.setAttribute(GenAi.ERROR_TYPE, error?.code ?? 'tool_error')
      // A tool's error message is part of its result (it often quotes the arguments): content.
      span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(error === undefined || !content ? {} : { message: redact(error.message) }),
      })
    }
    span.end()
  }

  private turnEnd(
    seq: number,
    reason: { kind: string; failure?: { code: string; message: string }; cause?: string },
  ): void {
    for (const span of this.tools.values()) span.end()
    this.tools.clear()
    this.step?.span.end()
    this.step = undefined
    const turn = this.turn
    this.turn = undefined
    if (turn === undefined) return
    turn.span.setAttribute(Dsh.END_SEQ, seq)
    turn.span.setAttribute(Dsh.TURN_END_REASON, reason.kind)
    if (reason.kind === 'error' && reason.failure !== undefined) {
      turn.span.setAttribute(GenAi.ERROR_TYPE, reason.failure.code)
      turn.span.setStatus({ code: SpanStatusCode.ERROR, message: redact(reason.failure.message) })
    } else if (reason.kind === 'aborted' || reason.kind === 'interrupted') {
      turn.span.setAttribute(GenAi.ERROR_TYPE, reason.kind)
      turn.span.setStatus({ code: SpanStatusCode.ERROR, message: redact(reason.cause ?? reason.kind) })
    }
    turn.span.end()
  }
}
