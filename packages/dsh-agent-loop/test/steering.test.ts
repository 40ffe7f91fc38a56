import { type UserMessage, userText } from 'dsh-llm'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { createHarness, dataOf, gatedTool, outline, texts } from './harness.ts'

describe('steering (must show 4)', () => {
  it('a steer during a tool-call step lands after that step’s tool results, in the next request', async () => {
    const h = await createHarness([toolCallResponse('c1', 'wait', {}), textResponse('adjusted')])
    const { running, release } = gatedTool(h)
    const agent = await h.create()
    agent.send(userText('start'))
    await running
    agent.steer(userText('use tabs'))
    release()
    await agent.whenIdle()
    expect(outline(agent.session).slice(3)).toEqual([
      'step/start',
      'user/message',
      'request/header',
      'assistant/chunk…',
      'assistant/message',
      'tool/call',
      'agent/inbox/spliced',
      'tool/result',
      'step/end',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'assistant/chunk…',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual([
      'start',
      'call:wait',
      'result:c1',
      'use tabs',
    ])
    expect(h.notes.filter((note) => note.startsWith('claimed'))).toEqual([
      'claimed:start@1',
      'claimed:use tabs@1',
    ])
  })

  it('two steers sent during one step both enter the next step together', async () => {
    const h = await createHarness([toolCallResponse('c1', 'wait', {}), textResponse('ok')])
    const { running, release } = gatedTool(h)
    const agent = await h.create()
    agent.send(userText('start'))
    await running
    agent.steer(userText('one'))
    agent.steer(userText('two'))
    release()
    await agent.whenIdle()
    expect(dataOf(agent.session, 'step/start')).toHaveLength(2)
    expect(texts(dataOf<UserMessage>(agent.session, 'user/message'))).toEqual(['start', 'one', 'two'])
    expect(h.model.callCount).toBe(2)
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual([
      'start',
      'call:wait',
      'result:c1',
      'one',
      'two',
    ])
  })

  it('two steers queued before the first step enters both enter it, after the turn’s prompt', async () => {
    const h = await createHarness([textResponse('ok')])
    const agent = await h.create()
    agent.send(userText('prompt'), { wakeup: false })
    agent.send(userText('steer one'), { target: 'next-step', wakeup: false })
    expect(agent.status).toBe('idle')
    agent.steer(userText('steer two'))
    await agent.whenIdle()
    expect(dataOf(agent.session, 'step/start')).toHaveLength(1)
    expect(texts(h.model.requests[0]?.messages ?? [])).toEqual(['prompt', 'steer one', 'steer two'])
    expect(dataOf(agent.session, 'turn/start')).toEqual([
      { turn: 1, trigger: { kind: 'send', target: 'next-step' } },
    ])
  })

  it('a steer while the model streams the final answer runs one more step', async () => {
    const h = await createHarness([
      { chunks: textResponse('first answer'), delayMs: 20 },
      textResponse('second'),
    ])
    const agent = await h.create()
    agent.send(userText('question'))
    agent.steer(userText('actually, shorter'))
    await agent.whenIdle()
    expect(h.model.callCount).toBe(1 + 1)
    expect(texts(h.model.requests[0]?.messages ?? [])).toEqual(['question'])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual([
      'question',
      'first answer',
      'actually, shorter',
    ])
  })
})
