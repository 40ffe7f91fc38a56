import { checkSessionLog, reconstructRequests, splitModelCalls } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { userText } from 'dsh-llm'
import type { SessionEvent } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { HEADER } from './driver.ts'
import { READ_TURN_SCRIPT, recordReadTurn, scriptedSession } from './scripted.ts'

installInvariantGuard()

/** A two-step turn recorded through the checked app; returns the driver and the requests the model saw. */
async function recorded() {
  const { app, session, adapter, driver } = await scriptedSession(READ_TURN_SCRIPT, 's-off')
  await recordReadTurn(driver, () => {
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [userText('queued')] })
  })
  return { app, session, adapter }
}

describe('reconstructRequests', () => {
  it('re-derives every request the model saw, in order, frozen', async () => {
    const { session, adapter } = await recorded()
    const requests = reconstructRequests(session.events, session.id)
    expect(requests).toEqual(adapter.requests)
    expect(requests.map((request) => request.messages.length)).toEqual([1, 3])
    expect(Object.isFrozen(requests)).toBe(true)
    expect(Object.isFrozen(requests[1])).toBe(true)
    expect(Object.isFrozen(requests[1]?.messages)).toBe(true)
    const anonymous = reconstructRequests(session.events)
    expect(anonymous[0]).toEqual({
      provider: 'scripted',
      model: 'script-1',
      system: 'You are terse.',
      messages: [session.events[0]?.data],
    })
  })

  it('finds one model call per run of chunks of a step', async () => {
    const { session } = await recorded()
    const calls = splitModelCalls(session.events)
    expect(calls.map((call) => [call.start, call.turn, call.step, call.chunks.length])).toEqual([
      [4, 1, 1, 7],
      [17, 1, 2, 5],
    ])
  })
})

describe('checkSessionLog', () => {
  it('finds nothing wrong with a log the checked app recorded', async () => {
    const { session } = await recorded()
    expect(checkSessionLog(session.events, { parent: null })).toEqual([])
  })

  it('runs the stream grammar over logged chunks', async () => {
    const { session } = await recorded()
    const events = [...session.events]
    // Drop the finish of the second call (seq 21) and renumber: the complete assistant/message after it lies.
    const cut = events
      .filter((event) => event.seq !== 21)
      .map((event, seq) => ({ ...event, seq }) as SessionEvent)
    expect(checkSessionLog(cut, { parent: null })).toEqual([
      {
        check: 'stream-grammar',
        seq: 21,
        index: 21,
        message:
          'assistant/message completes the model call starting at seq 17, but the stream ended after 4 chunk(s) without a finish chunk',
      },
    ])
    // A delta after the finish of the first call reads, offline, as a retry's call that starts badly,
    // and the answer after it is then not the assembly of that call's one chunk.
    const late = {
      ...events[10],
      data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } },
    }
    const extra = [...events.slice(0, 11), late, ...events.slice(11)].map(
      (event, seq) => ({ ...event, seq }) as SessionEvent,
    )
    expect(checkSessionLog(extra, { parent: null })).toEqual([
      {
        check: 'stream-grammar',
        seq: 11,
        index: 11,
        message:
          'assistant/chunk of the model call starting at seq 11 (turn 1 step 1): chunk #0 (text-delta index 0) needs an open text block 0, but no block-start opened it',
      },
      {
        check: 'log-grammar',
        seq: 12,
        index: 12,
        message: expect.stringMatching(
          /^assistant\/message carries message \S+, which is not the assembly of its 1 assistant\/chunk event\(s\) from seq 11: at content\[0\]\.type the chunks assemble "text", the message has "tool-call"$/,
        ),
      },
      {
        check: 'stream-grammar',
        seq: 12,
        index: 12,
        message:
          'assistant/message completes the model call starting at seq 11, but the stream ended after 1 chunk(s) without a finish chunk',
      },
    ])
  })

  it('accepts an interrupted assistant message from a stream cut short', () => {
    const events = [
      { type: 'turn/start', data: { turn: 1, trigger: { kind: 'queued' } } },
      { type: 'step/start', data: { turn: 1, step: 1 } },
      { type: 'request/header', data: { header: HEADER, reason: 'initial' } },
      {
        type: 'assistant/chunk',
        data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } },
      },
      {
        type: 'assistant/chunk',
        data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'par' } },
      },
      {
        type: 'assistant/message',
        data: {
          turn: 1,
          step: 1,
          interrupted: true,
          message: {
            id: 'a1',
            role: 'assistant',
            content: [{ type: 'text', text: 'par' }],
            source: { kind: 'model', provider: 'scripted', model: 'script-1' },
          },
        },
      },
      { type: 'step/end', data: { turn: 1, step: 1 } },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted', cause: 'user' } } },
    ].map((event, seq) => ({ ...event, seq, time: 0 }) as SessionEvent)
    expect(checkSessionLog(events)).toEqual([])
    expect(reconstructRequests(events)).toEqual([
      { provider: 'scripted', model: 'script-1', system: 'You are terse.', messages: [] },
    ])
  })

  it('reports a surface replace that does not fit', () => {
    const events = [
      { type: 'user/message', data: userText('a') },
      {
        type: 'user/message',
        data: userText('summary'),
        surface: { op: 'replace', start: 0, end: 3, sourceEventSeqs: [0] },
      },
    ].map((event, seq) => ({ ...event, seq, time: 0 }) as SessionEvent)
    expect(checkSessionLog(events)).toEqual([
      {
        check: 'log-grammar',
        seq: 1,
        index: 1,
        message: 'user/message at seq 1 replaces [0, 3) outside the surface of 1 messages',
      },
    ])
  })
})
