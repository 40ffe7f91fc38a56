/**
 * A hand-driven stand-in for the agent loop: appends the events a turn logs, builds requests the way
 * the loop does (header + live derived history, marked with the log length) and streams them through
 * `ctx.llm`, logging every chunk.
 */
import type { Context } from 'cordis'
import {
  type AssistantMessage,
  BlockAssembler,
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  type LlmRequest,
  markLoopRequest,
  type StreamChunk,
} from 'dsh-llm'
import { composeRequest, type RequestHeader, type Session } from 'dsh-session'

/** The header most tests log. */
export const HEADER: RequestHeader = Object.freeze({
  config: Object.freeze({ provider: 'scripted', model: 'script-1' }),
  system: 'You are terse.',
})

/** Drives one session like the loop would. */
export class Driver {
  turn = 0
  step = 0

  constructor(
    readonly app: Context,
    readonly session: Session,
  ) {}

  startTurn(): void {
    this.turn = this.session.lastTurn() + 1
    this.step = 0
    this.session.append('turn/start', { turn: this.turn, trigger: { kind: 'send', target: 'next-turn' } })
  }

  startStep(): void {
    this.step++
    this.session.append('step/start', { turn: this.turn, step: this.step })
  }

  header(header: RequestHeader = HEADER, reason: 'initial' | 'resume' | 'change' = 'initial'): void {
    this.session.append('request/header', { header, reason })
  }

  /** Opens a turn on the prompt `text` (message id `id`): the prompt, `turn/start`, step 1 and its header. */
  prompt(text: string, id?: string): void {
    this.user(text, id)
    this.startTurn()
    this.startStep()
    this.header()
  }

  user(text: string, id?: string): void {
    const content = [{ type: 'text', text }] as const
    this.session.append(
      'user/message',
      createUserMessage({ content, source: { kind: 'user' }, ...(id === undefined ? {} : { id }) }),
    )
  }

  /** The request the loop would build now: live header + live derived history, marked. */
  request(): LlmRequest {
    const header = this.session.requestHeader()
    if (header === undefined) throw new Error('driver: no header logged')
    const request = composeRequest(header.header, this.session.deriveMessages(), {
      sessionId: this.session.id,
    })
    markLoopRequest(request, { sessionId: this.session.id, logLength: this.session.seq })
    return request
  }

  /** Streams `request` through `ctx.llm`, logging each chunk; appends and returns the assistant message. */
  async call(request: LlmRequest = this.request()): Promise<AssistantMessage> {
    const assembler = new BlockAssembler()
    for await (const chunk of this.app.llm.stream(request)) {
      this.chunk(chunk)
      assembler.push(chunk)
    }
    const message = createAssistantMessage({
      content: assembler.blocks(),
      source: { kind: 'model', provider: request.provider, model: request.model },
    })
    const usage = assembler.usage()
    this.session.append('assistant/message', {
      turn: this.turn,
      step: this.step,
      message,
      ...(usage === undefined ? {} : { usage }),
    })
    return message
  }

  chunk(chunk: StreamChunk): void {
    this.session.append('assistant/chunk', { turn: this.turn, step: this.step, chunk })
  }

  toolCall(callId: string, name = 'read', args = '{}'): void {
    this.session.append('tool/call', {
      turn: this.turn,
      step: this.step,
      callId: CallId(callId),
      name,
      arguments: args,
    })
  }

  toolResult(callId: string, text: string, error?: { code: string; message: string }): void {
    const message = createToolResultMessage({
      callId: CallId(callId),
      content: [{ type: 'text', text }],
      ...(error === undefined ? {} : { isError: true }),
    })
    this.session.append('tool/result', {
      turn: this.turn,
      step: this.step,
      message,
      ...(error === undefined ? {} : { error }),
    })
  }

  endStep(): void {
    this.session.append('step/end', { turn: this.turn, step: this.step })
  }

  endTurn(): void {
    this.session.append('turn/end', { turn: this.turn, reason: { kind: 'completed' } })
  }
}

/** Collects a stream into an array. */
export async function drain(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const chunk of stream) out.push(chunk)
  return out
}

/** The `type` of each event, for exact sequence assertions. */
export function types(session: Session): string[] {
  return session.events.map((event) => event.type)
}
