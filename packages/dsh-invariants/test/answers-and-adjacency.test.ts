/**
 * Two log rules, online (refused before commit) and offline (`checkSessionLog`): a committed assistant
 * message is the assembly of its logged chunks, and tool results follow their calls directly, one
 * each, in model order. The derived request is checked for the same adjacency.
 */
import type { Context } from 'cordis'
import { checkSessionLog, InvariantError } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { createAssistantMessage, type StreamChunk, userText } from 'dsh-llm'
import { textResponse, toolCallsResponse } from 'dsh-llm/testing'
import type { Session, SessionEvent } from 'dsh-session'
import { beforeEach, describe, expect, it } from 'vitest'
import type { Driver } from './driver.ts'
import { scriptedSession, TWO_READS_SCRIPT, thrownBy } from './scripted.ts'

installInvariantGuard()

let app: Context
let session: Session
let driver: Driver

beforeEach(async () => {
  ;({ app, session, driver } = await scriptedSession(TWO_READS_SCRIPT, 's-adj'))
})

function refusal(append: () => unknown): { seq: number | undefined; message: string } {
  const before = session.seq
  const thrown = thrownBy(append)
  expect(thrown).toBeInstanceOf(InvariantError)
  expect(session.seq).toBe(before)
  const [violation, ...others] = app.invariants.takeViolations()
  expect(others).toEqual([])
  expect(violation?.check).toBe('log-grammar')
  return { seq: violation?.seq, message: violation?.message ?? '' }
}

function answer(text: string, interrupted = false): void {
  const message = createAssistantMessage({
    content: [{ type: 'text', text }],
    source: { kind: 'model', provider: 'scripted', model: 'script-1' },
  })
  session.append('assistant/message', {
    turn: driver.turn,
    step: driver.step,
    message,
    ...(interrupted ? { interrupted: true } : {}),
  })
}

const TEXT_CHUNKS: readonly StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'hello ' },
  { type: 'text-delta', index: 0, text: 'world' },
]

/** The log with the event at `index` replaced by `event` (its seq kept). */
function replaced(events: readonly SessionEvent[], index: number, make: (e: SessionEvent) => unknown) {
  return events.map((event, i) => (i === index ? (make(event) as SessionEvent) : event))
}

describe('message = its chunks', () => {
  it('refuses an assistant/message whose text is not what its chunks assemble', () => {
    driver.prompt('hi')
    for (const chunk of TEXT_CHUNKS) driver.chunk(chunk)
    driver.chunk({ type: 'block-end', index: 0, block: { type: 'text', text: 'hello world' } })
    driver.chunk({ type: 'finish', reason: { kind: 'stop' } })
    const { seq, message } = refusal(() => answer('hello there'))
    expect(seq).toBe(9)
    expect(message).toMatch(
      /^assistant\/message carries message \S+, which is not the assembly of its 5 assistant\/chunk event\(s\) from seq 4: at content\[0\]\.text the chunks assemble "hello world", the message has "hello there"$/,
    )
    answer('hello world')
    expect(checkSessionLog(session.events, { parent: null })).toEqual([])
  })

  it('refuses an answer with no chunks logged for it', () => {
    driver.prompt('hi')
    const { message } = refusal(() => answer('from nowhere'))
    expect(message).toMatch(
      /^assistant\/message carries message \S+, but no assistant\/chunk was logged for it: an answer is the assembly of its model call's chunks$/,
    )
  })

  it('holds an interrupted answer to the assembled prefix of its chunks', () => {
    driver.prompt('hi')
    for (const chunk of TEXT_CHUNKS) driver.chunk(chunk)
    const { message } = refusal(() => answer('hello world!', true))
    expect(message).toMatch(
      /which is not the interrupted prefix assembled from its 3 assistant\/chunk event\(s\) from seq 4: at content\[0\]\.text the chunks assemble "hello world", the message has "hello world!"$/,
    )
    answer('hello world', true)
  })

  it('starts a new assembly for the chunks of a retried call', async () => {
    driver.prompt('hi')
    driver.chunk({ type: 'block-start', index: 0, blockType: 'text' })
    driver.chunk({ type: 'text-delta', index: 0, text: 'half' })
    driver.chunk({
      type: 'finish',
      reason: { kind: 'error', failure: { code: 'SERVER', message: 'overloaded' } },
    })
    await driver.call()
    expect(app.invariants.violations).toEqual([])
  })

  it('is found offline, in a recorded log where the answer was rewritten', async () => {
    driver.prompt('hi')
    await driver.call()
    driver.toolCall('c1')
    driver.toolResult('c1', 'A')
    driver.toolCall('c2')
    driver.toolResult('c2', 'B')
    driver.endStep()
    driver.endTurn()
    const at = session.events.findIndex((event) => event.type === 'assistant/message')
    const edited = replaced(session.events, at, (event) => ({
      ...event,
      data: {
        ...(event.data as object),
        message: createAssistantMessage({
          content: [{ type: 'text', text: 'no tools after all' }],
          source: { kind: 'model', provider: 'scripted', model: 'script-1' },
        }),
      },
    }))
    const found = checkSessionLog(edited, { parent: null })
    expect(found[0]).toMatchObject({ check: 'log-grammar', seq: at, index: at })
    expect(found[0]?.message).toMatch(
      /^assistant\/message carries message \S+, which is not the assembly of its \d+ assistant\/chunk event\(s\) from seq 4: at content\[0\]\.type the chunks assemble "tool-call", the message has "text"$/,
    )
  })
})

describe('tool adjacency', () => {
  async function calls(): Promise<void> {
    driver.prompt('read both')
    await driver.call()
  }

  it('refuses a user message between an assistant message with tool calls and their results', async () => {
    await calls()
    driver.toolCall('c1')
    driver.toolResult('c1', 'A')
    const { message } = refusal(() => session.append('user/message', userText('hurry up')))
    expect(message).toMatch(
      /^user\/message carries message \S+, which stands between the tool calls of step 1 and their results \(unanswered: c2\): results follow their calls directly$/,
    )
  })

  it('refuses results out of model order', async () => {
    await calls()
    driver.toolCall('c1')
    driver.toolCall('c2')
    const { message } = refusal(() => driver.toolResult('c2', 'B'))
    expect(message).toBe(
      'tool/result answers call c2 while call c1, proposed before it, has no result: results follow the order the model made the calls',
    )
    driver.toolResult('c1', 'A')
    driver.toolResult('c2', 'B')
  })

  it('is found offline: a user message moved between the calls and their results', async () => {
    await calls()
    driver.toolCall('c1')
    driver.toolResult('c1', 'A')
    driver.toolCall('c2')
    driver.toolResult('c2', 'B')
    driver.endStep()
    driver.startStep()
    driver.user('and then?')
    await driver.call()
    driver.endStep()
    driver.endTurn()
    const events = [...session.events]
    const result = events.findIndex((event) => event.type === 'tool/result')
    const user = events.findLastIndex((event) => event.type === 'user/message')
    const moved = [...events]
    const [userEvent] = moved.splice(user, 1)
    if (userEvent === undefined) throw new Error('no user message')
    moved.splice(result + 1, 0, userEvent)
    const renumbered = moved.map((event, seq) => ({ ...event, seq }) as SessionEvent)
    const found = checkSessionLog(renumbered, { parent: null })
    expect(found.map((v) => [v.check, v.seq, v.message])).toEqual([
      [
        'log-grammar',
        result + 1,
        expect.stringMatching(
          /^user\/message carries message \S+, which stands between the tool calls of step 1 and their results \(unanswered: c2\)/,
        ),
      ],
      [
        'request-reconstruction',
        expect.any(Number),
        expect.stringMatching(
          /^the request of the model call starting at seq \d+ \(turn 1 step 2\) breaks tool adjacency at messages\[3\]: user message \S+ stands between the tool calls of message 1 and their results \(unanswered: c2\)$/,
        ),
      ],
    ])
  })

  it('checks every derived request, even with the log grammar left out', async () => {
    const loose = await scriptedSession(
      [toolCallsResponse([{ id: 'c1', name: 'read', args: {} }]), textResponse('ok')],
      's-loose',
      {
        invariants: { skip: ['log-grammar'] },
      },
    )
    const d = loose.driver
    d.prompt('read')
    await d.call()
    d.user('psst')
    d.toolCall('c1')
    d.toolResult('c1', 'A')
    d.endStep()
    d.startStep()
    await expect(d.call()).rejects.toThrow(InvariantError)
    const [violation] = loose.app.invariants.takeViolations()
    expect(violation?.check).toBe('request-reconstruction')
    expect(violation?.message).toMatch(
      /^the request marked for session s-loose at log length \d+ breaks tool adjacency at messages\[2\]: user message \S+ stands between the tool calls of message 1 and their results \(unanswered: c1\)$/,
    )
    expect(loose.adapter.callCount).toBe(1)
  })
})
