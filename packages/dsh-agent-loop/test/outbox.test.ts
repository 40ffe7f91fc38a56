import { type UserMessage, userText } from 'dsh-llm'
import { textResponse, toolCallResponse, toolCallsResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHarness, dataOf, gatedTool, outline, texts, types } from './harness.ts'

const plugin = (text: string) => userText(text, { kind: 'plugin', plugin: 'test' })

describe('the outbox', () => {
  it('additionalContexts from tools/post-execute follow all tool results of their step (must show 6)', async () => {
    const h = await createHarness([
      toolCallsResponse([
        { id: 'c1', name: 'read', args: { path: 'a' } },
        { id: 'c2', name: 'read', args: { path: 'b' } },
      ]),
      textResponse('done'),
    ])
    h.app.tools.register({
      name: 'read',
      description: 'reads',
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => `content of ${path}`,
    })
    h.app.on('tools/post-execute', async ({ args }, next) => {
      const output = await next()
      const { path } = args as { path: string }
      return { ...output, additionalContexts: [plugin(`${path} changed on disk`)] }
    })
    const agent = await h.run('read both')
    expect(outline(agent.session).slice(8, 15)).toEqual([
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
      'user/message',
      'user/message',
      'step/end',
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual([
      'read both',
      'call:read|call:read',
      'result:c1',
      'result:c2',
      'a changed on disk',
      'b changed on disk',
    ])
    expect(dataOf<UserMessage>(agent.session, 'user/message')[1]?.source).toEqual({
      kind: 'plugin',
      plugin: 'test',
    })
  })

  it('an inject during a tool call waits for the step’s tool results', async () => {
    const h = await createHarness([toolCallResponse('c1', 'wait', {}), textResponse('ok')])
    const { running, release } = gatedTool(h, 'wait', 'w')
    const agent = await h.create()
    agent.send(userText('go'))
    await running
    const before = agent.session.seq
    agent.inject(plugin('clock: 12:00'))
    expect(agent.session.seq).toBe(before)
    release()
    await agent.whenIdle()
    expect(outline(agent.session).slice(8, 12)).toEqual([
      'tool/call',
      'tool/result',
      'user/message',
      'step/end',
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual([
      'go',
      'call:wait',
      'result:c1',
      'clock: 12:00',
    ])
  })

  it('steering and context accepted for one boundary reach the same following request', async () => {
    const h = await createHarness([toolCallResponse('c1', 'wait', {}), textResponse('ok')])
    const { running, release } = gatedTool(h, 'wait', 'w')
    const agent = await h.create()
    agent.send(userText('go'))
    await running
    agent.inject(plugin('context'))
    agent.steer(userText('steer'))
    release()
    await agent.whenIdle()
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual([
      'go',
      'call:wait',
      'result:c1',
      'context',
      'steer',
    ])
  })

  it('an inject during a step without tools drains before that step ends', async () => {
    const h = await createHarness([{ chunks: textResponse('answer'), delayMs: 10 }])
    const agent = await h.create()
    agent.send(userText('q'))
    agent.inject(plugin('late context'))
    await agent.whenIdle()
    expect(outline(agent.session).slice(-4)).toEqual([
      'assistant/message',
      'user/message',
      'step/end',
      'turn/end',
    ])
  })

  it('an inject while the turn closes is drained before turn/end', async () => {
    const h = await createHarness([textResponse('answer')])
    h.app.on('agent/turn-stopping', ({ agent }) => agent.inject(plugin('noted')))
    const agent = await h.run('q')
    expect(outline(agent.session).slice(-4)).toEqual([
      'assistant/message',
      'step/end',
      'user/message',
      'turn/end',
    ])
  })
})

describe('idle inject (must show 7)', () => {
  it('appends at once, opens no turn, and precedes the prompt in the next request', async () => {
    const h = await createHarness([textResponse('ok')])
    const agent = await h.create()
    const context = plugin('the repo uses pnpm')
    agent.inject(context)
    expect(types(agent.session)).toEqual(['user/message'])
    expect(agent.status).toBe('idle')
    await agent.whenIdle()
    expect(h.model.callCount).toBe(0)
    expect(agent.session.lastTurn()).toBe(0)
    const prompt = userText('install deps')
    agent.send(prompt)
    await agent.whenIdle()
    expect(h.model.requests[0]?.messages).toEqual([context, prompt])
    expect(dataOf(agent.session, 'turn/start')).toEqual([
      { turn: 1, trigger: { kind: 'send', target: 'next-turn' } },
    ])
    expect(h.notes.filter((note) => note.startsWith('status'))).toEqual(['status:running', 'status:idle'])
  })
})
