import { userText } from 'dsh-llm'
import { textResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { createHarness, outline, types } from './harness.ts'

describe('a prompt from idle (must show 1)', () => {
  it('records the insert, turn/start and the claim before send returns, then runs one turn', async () => {
    const h = await createHarness([textResponse('hello there', { deltas: ['hello', ' there'] })])
    const agent = await h.create()
    const prompt = userText('hi')
    agent.send(prompt)
    expect(types(agent.session)).toEqual(['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced'])
    expect(agent.status).toBe('running')
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
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
    expect(agent.status).toBe('idle')
    expect(h.errors).toEqual([])
  })
})
