import { Context } from 'cordis'
import { checkSessionLog, InvariantError } from 'dsh-invariants'
import { installInvariantGuard, mountInvariants } from 'dsh-invariants/vitest'
import { CallId, LlmRuntime, SessionId, userText } from 'dsh-llm'
import { appendInput, interruptedTurnClosers, type Session, type SessionEvent, Sessions } from 'dsh-session'
import { beforeEach, describe, expect, it } from 'vitest'
import { type Driver, HEADER, types } from './driver.ts'
import { scriptedSession, TWO_READS_SCRIPT, thrownBy } from './scripted.ts'

installInvariantGuard()

let app: Context
let session: Session
let driver: Driver

beforeEach(async () => {
  ;({ app, session, driver } = await scriptedSession(TWO_READS_SCRIPT, 's-log'))
})

/** Runs `append`, expects the log-grammar refusal `message` at `seq`, and that nothing was appended. */
function expectRefused(append: () => unknown, seq: number, message: string): void {
  const before = session.seq
  const thrown = thrownBy(append)
  expect(thrown).toBeInstanceOf(InvariantError)
  expect(thrown).toMatchObject({
    code: 'INVARIANT',
    check: 'log-grammar',
    seq,
    sessionId: 's-log',
    message: `[log-grammar] seq ${seq}: ${message}`,
  })
  expect(session.seq).toBe(before)
  expect(app.invariants.takeViolations()).toEqual([
    { check: 'log-grammar', seq, sessionId: 's-log', message },
  ])
}

async function toolStep(): Promise<void> {
  driver.prompt('read both')
  await driver.call()
}

describe('log grammar, online (before the event commits)', () => {
  it('passes a well-formed turn with tool calls and counts every event', async () => {
    await toolStep()
    driver.toolCall('c1')
    driver.toolResult('c1', 'A')
    driver.toolCall('c2')
    driver.toolResult('c2', 'B')
    driver.endStep()
    driver.startStep()
    await driver.call()
    driver.endStep()
    driver.endTurn()
    expect(app.invariants.counters.eventsChecked).toBe(session.seq)
    expect(checkSessionLog(session.events, { parent: null })).toEqual([])
  })

  it('refuses a tool/result for a call the step never proposed', async () => {
    await toolStep()
    expectRefused(
      () => driver.toolResult('c9', 'from nowhere'),
      17,
      'tool/result answers call c9, which is not a call of step 1 (no assistant/message proposed it)',
    )
  })

  it('refuses a second result for one call', async () => {
    await toolStep()
    driver.toolCall('c1')
    driver.toolResult('c1', 'A')
    expectRefused(
      () => driver.toolResult('c1', 'A again'),
      19,
      'tool/result answers call c1 a second time (first result at seq 18)',
    )
  })

  it('refuses a tool/call the assistant message did not propose, and one announced twice', async () => {
    await toolStep()
    expectRefused(
      () => driver.toolCall('c7'),
      17,
      'tool/call announces call c7, which no assistant/message of step 1 proposed',
    )
    driver.toolCall('c1')
    expectRefused(
      () => driver.toolCall('c1'),
      18,
      'tool/call announces call c1 a second time (first at seq 17)',
    )
  })

  it('refuses a non-error result for a call that never started, and accepts an error result', async () => {
    await toolStep()
    expectRefused(
      () => driver.toolResult('c1', 'A'),
      17,
      'tool/result answers call c1, which never started (no tool/call), with a non-error result',
    )
    driver.toolResult('c1', 'cancelled before it started', {
      code: 'TOOL_NOT_STARTED',
      message: 'not started',
    })
  })

  it('refuses a step/end that leaves proposed calls unanswered', async () => {
    await toolStep()
    driver.toolCall('c1')
    driver.toolResult('c1', 'A')
    expectRefused(() => driver.endStep(), 19, 'step/end closes step 1 with unanswered tool call(s) c2')
  })

  it('refuses model output before any request/header', () => {
    driver.startTurn()
    driver.startStep()
    expectRefused(
      () => driver.chunk({ type: 'block-start', index: 0, blockType: 'text' }),
      2,
      'assistant/chunk is the first model output of the log, but no request/header precedes it; the request cannot be re-derived',
    )
  })

  it('refuses the same chunk appended through appendChunk, checked from its parts by the chunk hook', () => {
    driver.startTurn()
    driver.startStep()
    expectRefused(
      () => session.appendChunk(1, 1, { type: 'block-start', index: 0, blockType: 'text' }),
      2,
      'assistant/chunk is the first model output of the log, but no request/header precedes it; the request cannot be re-derived',
    )
  })

  it('assembles chunks appended through appendChunk into the step output the message is checked against', async () => {
    driver.prompt('read both')
    session.appendChunk(1, 1, { type: 'block-start', index: 0, blockType: 'text' })
    session.appendChunk(1, 1, { type: 'text-delta', index: 0, text: 'hi' })
    session.appendChunk(1, 1, { type: 'block-end', index: 0, block: { type: 'text', text: 'hi' } })
    session.appendChunk(1, 1, { type: 'finish', reason: { kind: 'stop' } })
    const seq = session.seq
    expectRefused(
      () =>
        session.append('assistant/message', {
          turn: 1,
          step: 1,
          message: {
            id: 'm-other',
            role: 'assistant',
            content: [{ type: 'text', text: 'other' }],
            source: { kind: 'model', provider: 'p', model: 'm' },
          } as never,
        }),
      seq,
      'assistant/message carries message m-other, which is not the assembly of its 4 assistant/chunk event(s) from seq 4: at content[0].text the chunks assemble "hi", the message has "other"',
    )
  })

  it('refuses an inbox splice whose coordinates do not fit the folded inbox', () => {
    const queued = userText('later', { kind: 'user' })
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [queued] })
    expectRefused(
      () =>
        session.append('agent/inbox/spliced', {
          target: 'next-step',
          start: 0,
          removedCount: 1,
          inserted: [],
        }),
      1,
      'agent/inbox/spliced is not a valid inbox splice: removedCount 1 at start 0 exceeds the next-step list of 0 messages',
    )
    expectRefused(
      () => session.append('agent/inbox/spliced', { target: 'next-step', start: 0, inserted: [queued] }),
      1,
      `agent/inbox/spliced is not a valid inbox splice: message ${queued.id} is already pending in the inbox`,
    )
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] })
  })

  it('refuses session/end-seed outside a fork, and accepts the one a fork writes', async () => {
    driver.user('hi')
    expectRefused(
      () => session.append('session/end-seed', {}),
      1,
      'session/end-seed marks the end of a fork seed, but this session is not a fork',
    )
    const child = await app.sessions.fork(session, 1)
    expect(types(child)).toEqual(['user/message', 'session/end-seed'])
    expect(child.parent).toEqual({ sessionId: 's-log', seedLength: 1 })
  })

  it('accepts a fork of a fork: the seed carries its parent’s session/end-seed, the child adds its own', async () => {
    driver.user('hi')
    const child = await app.sessions.fork(session, 1)
    child.append('user/message', userText('and then'))
    const grandchild = await app.sessions.fork(child, 3)
    expect(types(grandchild)).toEqual([
      'user/message',
      'session/end-seed',
      'user/message',
      'session/end-seed',
    ])
    expect(grandchild.parent).toEqual({ sessionId: child.id, seedLength: 3 })
    expect(app.invariants.takeViolations()).toEqual([])
    expect(checkSessionLog(grandchild.events, { parent: { sessionId: child.id, seedLength: 3 } })).toEqual([])
    expect(checkSessionLog(grandchild.events)).toEqual([])
    // Only the marker at the seed length ends this fork's seed; an ancestor's may not be repeated after it.
    expect(() => grandchild.append('session/end-seed', {})).toThrow(
      `[log-grammar] seq 4: session/end-seed appears a second time; the seed already ended at seq 3`,
    )
    app.invariants.takeViolations()
  })

  it('leaves turn enclosure that the session already enforces to the session', () => {
    driver.startTurn()
    let thrown: unknown
    try {
      session.append('turn/start', { turn: 2, trigger: { kind: 'queued' } })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ name: 'SessionError', code: 'ENCLOSURE' })
    expect(app.invariants.violations).toEqual([])
  })

  it('accepts the repair closers of an interrupted turn (TOOL_NOT_STARTED without a tool/call)', async () => {
    await toolStep()
    driver.toolCall('c1')
    const closers = interruptedTurnClosers(session.events)
    expect(closers.map((closer) => closer.type)).toEqual([
      'tool/result',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    for (const closer of closers) appendInput(session, closer)
    expect(checkSessionLog(session.events, { parent: null })).toEqual([])
  })

  it('catches up on events committed before it was mounted', async () => {
    const late = new Context()
    await late.plugin(LlmRuntime)
    await late.plugin(Sessions)
    const early = await late.sessions.create({ id: SessionId('s-early') })
    early.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    early.append('step/start', { turn: 1, step: 1 })
    const registry = await mountInvariants(late)
    let thrown: unknown
    try {
      early.append('tool/result', {
        turn: 1,
        step: 1,
        message: {
          id: userText('x').id,
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: CallId('c1'), content: [] }],
          source: { kind: 'tool', callId: CallId('c1') },
        },
      })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({
      message:
        '[log-grammar] seq 2: tool/result answers call c1, which is not a call of step 1 (no assistant/message proposed it)',
    })
    expect(registry.takeViolations()).toHaveLength(1)
    early.append('step/end', { turn: 1, step: 1 })
    expect(registry.counters.eventsChecked).toBe(2)
  })
})

/** Builds a log from `[type, data, seq?]` entries: seq runs on from the previous one unless given; time 0. */
function log(entries: ReadonlyArray<readonly [string, unknown, number?]>): SessionEvent[] {
  let next = 0
  return entries.map(([type, data, given]) => {
    const seq = given ?? next
    next = seq + 1
    return { type, data, seq, time: 0 } as SessionEvent
  })
}

const trigger = { kind: 'queued' }

describe('log grammar, offline (checkSessionLog)', () => {
  it('reports a request/retry outside the open step it names', () => {
    const failure = { code: 'SERVER', message: 'overloaded' }
    const events = log([
      ['turn/start', { turn: 1, trigger }],
      ['request/retry', { turn: 1, step: 1, attempt: 1, delayMs: 0, failure }],
    ])
    expect(checkSessionLog(events).map((violation) => violation.message)).toEqual([
      'request/retry needs an open step, but turn 1 has none open',
    ])
  })

  it('reports a turn opened twice', () => {
    const events = log([
      ['turn/start', { turn: 1, trigger }],
      ['turn/start', { turn: 2, trigger }],
    ])
    expect(checkSessionLog(events)).toEqual([
      {
        check: 'log-grammar',
        seq: 1,
        index: 1,
        message: 'turn/start opens turn 2 while turn 1 is still open (opened at seq 0)',
      },
    ])
  })

  it('reports every violation of a log, in order, and keeps going after each', () => {
    const result = {
      id: 'r1',
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: 'c9', content: [] }],
      source: { kind: 'tool', callId: 'c9' },
    }
    const events = log([
      ['user/message', userText('hi')],
      ['turn/end', { turn: 1, reason: { kind: 'completed' } }],
      ['turn/start', { turn: 2, trigger }],
      ['step/start', { turn: 2, step: 2 }],
      ['request/header', { header: HEADER, reason: 'initial' }, 7],
      ['tool/result', { turn: 2, step: 2, message: result }],
      ['turn/end', { turn: 2, reason: { kind: 'completed' } }],
      ['turn/start', { turn: 3, trigger }],
      ['turn/end', { turn: 3, reason: { kind: 'completed' } }],
      ['session/end-seed', {}],
      ['agent/inbox/spliced', { target: 'next-turn', start: 2, inserted: [] }],
    ])
    expect(
      checkSessionLog(events, { parent: null }).map(
        (v) => `${v.index} seq ${v.seq} [${v.check}] ${v.message}`,
      ),
    ).toEqual([
      '1 seq 1 [log-grammar] turn/end stands between turns; it belongs inside an open turn (turn/start first)',
      '2 seq 2 [log-grammar] turn/start numbers turn 2; expected 1',
      '3 seq 3 [log-grammar] step/start numbers step 2 of turn 2; expected 1',
      '4 seq 7 [log-grammar] request/header has seq 7; expected 4 (seqs run contiguously from 0)',
      '5 seq 8 [log-grammar] tool/result answers call c9, which is not a call of step 2 (no assistant/message proposed it)',
      '6 seq 9 [log-grammar] turn/end closes turn 2 while step 2 is still open (opened at seq 3)',
      '9 seq 12 [log-grammar] session/end-seed marks the end of a fork seed, but this session is not a fork',
      '10 seq 13 [log-grammar] agent/inbox/spliced is not a valid inbox splice: start 2 is outside the next-turn list of 0 messages',
    ])
  })

  it('pins session/end-seed to the fork seed length when the parent is known', () => {
    const events = log([
      ['user/message', userText('a')],
      ['user/message', userText('b')],
      ['session/end-seed', {}],
    ])
    const parent = { sessionId: SessionId('p'), seedLength: 1 }
    expect(checkSessionLog(events, { parent }).map((v) => v.message)).toEqual([
      "user/message stands at seq 1, where this fork's session/end-seed belongs (its seed length)",
      "session/end-seed stands at seq 2; this fork's seed length is 1",
    ])
    expect(checkSessionLog(events, { parent: { ...parent, seedLength: 2 } })).toEqual([])
    expect(checkSessionLog(events)).toEqual([])
  })
})
