/** A realistic stream of session events for the storage scenario: the tool-loop workload's log. */
import {
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  type SessionId,
  type StreamChunk,
  userText,
} from 'dsh-llm'
import { SESSION_FORMAT_VERSION, type SessionEvent, type SessionFileHeader } from 'dsh-session'
import { dshStepChunks } from '../loop/dsh-chunks.ts'
import { STEP_TEXT, stepScript, TOOL_RESULT } from '../workload.ts'

/**
 * The first `count` events of one long tool-loop turn (user message, turn start, then per step:
 * step start, 30 chunks, the assistant message, tool call, tool result, step end), seqs from 0.
 * The log may end mid-step; storage loads do not require a closed turn.
 */
export function toolLoopEvents(count: number): SessionEvent[] {
  const events: SessionEvent[] = []
  const time = Date.now()
  const push = (event: Omit<SessionEvent, 'seq' | 'time'>) => {
    if (events.length < count) events.push({ ...event, seq: events.length, time } as SessionEvent)
  }
  const steps = Math.ceil(count / 30) + 1
  push({ type: 'user/message', data: userText('Run the scripted loop.'), surface: { op: 'append' } })
  push({ type: 'turn/start', data: { turn: 1, trigger: { kind: 'send', target: 'next-turn' } } })
  for (let i = 0; events.length < count; i++) {
    const step = i + 1
    const script = stepScript(i, steps)
    push({ type: 'step/start', data: { turn: 1, step } })
    const chunks: StreamChunk[] = dshStepChunks(script)
    for (const chunk of chunks) push({ type: 'assistant/chunk', data: { turn: 1, step, chunk } })
    const call = script.call
    const content =
      call === undefined
        ? [{ type: 'text' as const, text: STEP_TEXT }]
        : [
            { type: 'text' as const, text: STEP_TEXT },
            { type: 'tool-call' as const, id: CallId(call.id), name: call.name, arguments: call.args },
          ]
    const message = createAssistantMessage({
      content,
      source: { kind: 'model', provider: 'bench', model: 'scripted' },
    })
    push({ type: 'assistant/message', data: { turn: 1, step, message }, surface: { op: 'append' } })
    if (call !== undefined) {
      const callId = CallId(call.id)
      push({ type: 'tool/call', data: { turn: 1, step, callId, name: call.name, arguments: call.args } })
      const result = createToolResultMessage({ callId, content: [{ type: 'text', text: TOOL_RESULT }] })
      push({ type: 'tool/result', data: { turn: 1, step, message: result }, surface: { op: 'append' } })
    }
    push({ type: 'step/end', data: { turn: 1, step } })
  }
  return events
}

/** The header the storage scenarios create their sessions with: `sessionId`, created at time 0. */
export function benchHeader(sessionId: SessionId): SessionFileHeader {
  return { format: 'dsh-session', version: SESSION_FORMAT_VERSION, sessionId, createdAt: 0 }
}
