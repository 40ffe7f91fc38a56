/** Shared scaffolding for the dsh-session tests: an app with the store mounted, and event builders. */
import { Context } from 'cordis'
import {
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  type Message,
  type UserMessage,
} from 'dsh-llm'
import Sessions, { SessionError, type SessionEvent, type SessionsConfig } from 'dsh-session'

/** A fresh app with `Sessions` mounted and a fixed clock (time 1000, 1001, ...). */
export async function mountSessions(config: SessionsConfig = {}): Promise<Context> {
  const app = new Context()
  let now = 1000
  await app.plugin(Sessions, { clock: () => now++, ...config })
  return app
}

/** The types of `events`, in order. */
export function types(events: readonly SessionEvent[]): string[] {
  return events.map((event) => event.type)
}

/** A user message with one text block and a fixed id. */
export function user(id: string, text = id): UserMessage {
  return createUserMessage({ id, content: [{ type: 'text', text }], source: { kind: 'user' } })
}

/** An assistant message from model `m` with the given blocks. */
export function assistant(id: string, content: Message['content']) {
  return createAssistantMessage({ id, content, source: { kind: 'model', provider: 'p', model: 'm' } })
}

/** A tool result answering `callId`. */
export function toolResult(id: string, callId: string, text = 'ok') {
  return createToolResultMessage({ id, callId: CallId(callId), content: [{ type: 'text', text }] })
}

/** A tool-call block. */
export function callBlock(id: string, name = 'read') {
  return { type: 'tool-call' as const, id: CallId(id), name, arguments: '{}' }
}

/** Runs `fn`, expecting it to throw a `SessionError`; returns its code and message. */
export function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn()
  } catch (error) {
    if (!(error instanceof SessionError)) throw error
    return { code: error.code, message: error.message }
  }
  throw new Error('expected a SessionError')
}

/** Awaits `promise`, expecting it to reject with a `SessionError`; returns its code and message. */
export async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise
  } catch (error) {
    if (!(error instanceof SessionError)) throw error
    return { code: error.code, message: error.message }
  }
  throw new Error('expected a SessionError')
}
