import { userText } from 'dsh-llm'
import { type ScriptStep, textResponse, toolCallResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHarness, dataOf, echoTool, lastTurnEnd, outline, probeTool, texts, types } from './harness.ts'

describe('a prompt from idle (must show 1)', () => {
  it('records the insert, turn/start and the claim before send returns', async () => {
    const h = await createHarness([textResponse('hello')])
    const agent = await h.create()
    const prompt = userText('hi')
    agent.send(prompt)
    expect(types(agent.session)).toEqual(['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced'])
    expect(agent.session.events.map((event) => event.data)).toEqual([
      { target: 'next-turn', start: 0, inserted: [prompt] },
      { turn: 1, trigger: { kind: 'send', target: 'next-turn' } },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [] },
    ])
    expect(agent.status).toBe('running')
    expect(agent.inbox.nextTurn).toEqual([])
    expect(h.notes).toEqual(['created', 'inserted:hi', 'status:running', 'claimed:hi@1'])
    await agent.whenIdle()
  })

  it('runs the whole turn: step, entered prompt, header, chunks, answer, turn/end completed', async () => {
    const h = await createHarness([textResponse('hello there', { deltas: ['hello', ' there'] })])
    const agent = await h.create({ system: 'be brief' })
    const prompt = userText('hi')
    agent.send(prompt)
    await agent.whenIdle()
    expect(outline(agent.session)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'assistant/chunk…',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(types(agent.session).filter((type) => type === 'assistant/chunk')).toHaveLength(6)
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(dataOf(agent.session, 'request/header')).toEqual([
      { header: { config: { provider: 'test', model: 'm' }, system: 'be brief' }, reason: 'initial' },
    ])
    expect(h.model.requests).toEqual([
      { provider: 'test', model: 'm', system: 'be brief', messages: [prompt], sessionId: agent.session.id },
    ])
    const answer = dataOf<{ message: { content: unknown }; usage: unknown }>(
      agent.session,
      'assistant/message',
    )
    expect(answer.map((data) => data.message.content)).toEqual([[{ type: 'text', text: 'hello there' }]])
    expect(agent.status).toBe('idle')
    expect(h.notes.slice(-1)).toEqual(['status:idle'])
    expect(h.errors).toEqual([])
  })

  it('an empty enter at step 1 closes a balanced turn with no steps', async () => {
    const h = await createHarness([])
    h.app.on('agent/pre-step', async () => ({ kind: 'enter', messages: [] }))
    const agent = await h.run('nothing to do')
    expect(types(agent.session)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'turn/end',
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
    expect(h.model.callCount).toBe(0)
  })
})

/** A script calling `echo` twice (texts `1` and `2`, calls `c1` and `c2`), then answering `answer`. */
function twoEchoesThen(answer: string): ScriptStep[] {
  return [
    toolCallResponse('c1', 'echo', { text: '1' }),
    toolCallResponse('c2', 'echo', { text: '2' }),
    textResponse(answer),
  ]
}

describe('continuing and stopping', () => {
  it('runs another step after tools, and stops when the model answers without tools', async () => {
    const h = await createHarness([toolCallResponse('c1', 'echo', { text: 'x' }), textResponse('done')])
    echoTool(h, (text) => `echo ${text}`)
    const agent = await h.run('go')
    expect(outline(agent.session)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'assistant/chunk…',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'assistant/chunk…',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual(['go', 'call:echo', 'result:c1'])
  })

  it('agent/turn-stopping may steer to run another step', async () => {
    const h = await createHarness([textResponse('first'), textResponse('second')])
    let steered = false
    h.app.on('agent/turn-stopping', ({ agent, turn, step }) => {
      expect([turn, step]).toEqual(steered ? [1, 2] : [1, 1])
      if (!steered) agent.steer(userText('one more thing'))
      steered = true
    })
    const agent = await h.run('start')
    expect(outline(agent.session).slice(8)).toEqual([
      'step/end',
      'agent/inbox/spliced',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'assistant/chunk…',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual(['start', 'first', 'one more thing'])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'completed' })
  })

  it('maxSteps ends the turn max-steps when another step is owed', async () => {
    const h = await createHarness(twoEchoesThen('never requested'))
    echoTool(h)
    const agent = await h.run('loop', { maxSteps: 2 })
    expect(h.model.callCount).toBe(2)
    expect(dataOf(agent.session, 'step/start')).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'max-steps', limit: 2 })
    expect(types(agent.session).slice(-3)).toEqual(['tool/result', 'step/end', 'turn/end'])
  })

  it('a max-tokens finish ends the turn max-tokens and runs no truncated tool call', async () => {
    const h = await createHarness([
      toolCallResponse('c1', 'echo', { text: 'cut' }, { finish: { kind: 'max-tokens' }, text: 'thinking' }),
    ])
    const echo = probeTool(h, {
      name: 'echo',
      description: 'echoes',
      parameters: z.object({ text: z.string() }),
      answer: 'no',
    })
    const agent = await h.run('long')
    expect(echo.ran).toBe(false)
    expect(types(agent.session)).not.toContain('tool/call')
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'max-tokens' })
  })

  it('writes a change header only when the rendered header differs', async () => {
    const h = await createHarness(twoEchoesThen('done'))
    echoTool(h)
    h.app.on('agent/request', async ({ step }, next) => ({
      ...(await next()),
      temperature: step === 1 ? 0 : 0.5,
    }))
    const agent = await h.run('go')
    const headers = dataOf<{ header: { config: unknown }; reason: string }>(agent.session, 'request/header')
    expect(headers.map((data) => [data.reason, data.header.config])).toEqual([
      ['initial', { provider: 'test', model: 'm', temperature: 0 }],
      ['change', { provider: 'test', model: 'm', temperature: 0.5 }],
    ])
    expect(h.model.requests.map((request) => request.temperature)).toEqual([0, 0.5, 0.5])
    expect(h.model.requests[0]?.tools).toEqual([
      {
        name: 'echo',
        description: 'echoes',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string' } },
          required: ['text'],
          additionalProperties: false,
        },
      },
    ])
  })

  it('agent/system-prompt listeners render the system prompt around the configured one', async () => {
    const h = await createHarness([textResponse('ok')])
    h.app.on('agent/system-prompt', async ({ base }, next) => `${await next()} (base was ${base})`)
    await h.run('hi', { system: 'you help' })
    expect(h.model.requests[0]?.system).toBe('you help (base was you help)')
  })
})
