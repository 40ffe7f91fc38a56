import { CallId, createToolResultMessage, MessageId } from 'dsh-llm'
import { interruptedTurnClosers, type Session } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { assistant, callBlock, mountSessions, toolResult, types, user } from './support.ts'

async function fresh(): Promise<Session> {
  const app = await mountSessions()
  return app.sessions.create()
}

function errorResult(turn: number, step: number, callId: string, code: string, text: string) {
  return {
    type: 'tool/result',
    data: {
      turn,
      step,
      message: createToolResultMessage({
        id: MessageId(`repair-${callId}`),
        callId: CallId(callId),
        content: [{ type: 'text', text }],
        isError: true,
      }),
      error: { code, message: text },
    },
  }
}

const unknownOutcome = (id: string, name: string) =>
  `Tool call ${id} (${name}) started, but the session ended before its result was recorded; its outcome is unknown.`
const notStarted = (id: string, name: string) =>
  `Tool call ${id} (${name}) was not started before the session ended.`

describe('interruptedTurnClosers', () => {
  test('is empty for a closed log', async () => {
    const session = await fresh()
    expect(interruptedTurnClosers(session.events)).toEqual([])
    session.append('user/message', user('u1'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    expect(interruptedTurnClosers(session.events)).toEqual([])
  })

  test('an open turn with no open step gets only turn/end interrupted', async () => {
    const session = await fresh()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('step/end', { turn: 1, step: 1 })
    expect(interruptedTurnClosers(session.events)).toEqual([
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'interrupted' } } },
    ])
  })

  test('an open step: an error result per unanswered call in call order, then step/end, then turn/end', async () => {
    const session = await fresh()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('step/end', { turn: 1, step: 1 })
    session.append('step/start', { turn: 1, step: 2 })
    const calls = [callBlock('c1', 'read'), callBlock('c2', 'write'), callBlock('c3', 'grep')]
    session.append('assistant/message', { turn: 1, step: 2, message: assistant('a2', calls) })
    session.append('tool/call', { turn: 1, step: 2, callId: CallId('c1'), name: 'read', arguments: '{}' })
    session.append('tool/call', { turn: 1, step: 2, callId: CallId('c2'), name: 'write', arguments: '{}' })
    session.append('tool/result', { turn: 1, step: 2, message: toolResult('r1', 'c1') })
    const closers = interruptedTurnClosers(session.events)
    expect(closers).toEqual([
      errorResult(1, 2, 'c2', 'TOOL_OUTCOME_UNKNOWN', unknownOutcome('c2', 'write')),
      errorResult(1, 2, 'c3', 'TOOL_NOT_STARTED', notStarted('c3', 'grep')),
      { type: 'step/end', data: { turn: 1, step: 2 } },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'interrupted' } } },
    ])
    expect(interruptedTurnClosers(session.events)).toEqual(closers)
  })

  test('a logged tool/call with no matching block in the assistant message still gets its result', async () => {
    const session = await fresh()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('tool/call', { turn: 1, step: 1, callId: CallId('x9'), name: 'run', arguments: '{}' })
    expect(interruptedTurnClosers(session.events).map((closer) => closer.type)).toEqual([
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(interruptedTurnClosers(session.events)[0]).toEqual(
      errorResult(1, 1, 'x9', 'TOOL_OUTCOME_UNKNOWN', unknownOutcome('x9', 'run')),
    )
  })

  test('the closers append cleanly through the normal path with contiguous seqs and close the turn', async () => {
    const session = await fresh()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', { turn: 1, step: 1, message: assistant('a1', [callBlock('c1')]) })
    for (const closer of interruptedTurnClosers(session.events)) {
      session.append(closer.type as never, closer.data as never)
    }
    expect(types(session.events)).toEqual([
      'turn/start',
      'step/start',
      'assistant/message',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(session.events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5])
    expect(session.openTurn()).toBeUndefined()
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['a1', 'repair-c1'])
  })
})
