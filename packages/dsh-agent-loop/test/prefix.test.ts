import type { Context } from 'cordis'
import { type Message, SessionId, userText } from 'dsh-llm'
import { textResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { createHarness, dataOf, gate, lastTurnEnd, texts, types } from './harness.ts'

const opening = (text: string) => userText(text, { kind: 'plugin', plugin: 'prefix' })

describe('the session prefix (must show 8)', () => {
  it('two plugins contribute in registration order; the prefix leads every request and sits only in the header', async () => {
    const h = await createHarness([textResponse('a1'), textResponse('a2')])
    let compositions = 0
    const skills = opening('skills: grep, sed')
    const agentsMd = opening('AGENTS.md: be terse')
    await h.app.plugin((ctx: Context) => {
      ctx.on('agent/session-prefix', async (_input, next) => {
        compositions++
        return [skills, ...(await next())]
      })
    })
    await h.app.plugin((ctx: Context) => {
      ctx.on('agent/session-prefix', async (_input, next) => [agentsMd, ...(await next())])
    })
    const agent = await h.run('p1')
    agent.send(userText('p2'))
    await agent.whenIdle()
    expect(compositions).toBe(1)
    expect(texts(h.model.requests[0]?.messages ?? [])).toEqual([
      'skills: grep, sed',
      'AGENTS.md: be terse',
      'p1',
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual([
      'skills: grep, sed',
      'AGENTS.md: be terse',
      'p1',
      'a1',
      'p2',
    ])
    expect(dataOf(agent.session, 'request/header')).toEqual([
      {
        header: { config: { provider: 'test', model: 'm' }, messagePrefix: [skills, agentsMd] },
        reason: 'initial',
      },
    ])
    expect(texts(agent.session.deriveMessages())).toEqual(['p1', 'a1', 'p2', 'a2'])
  })

  it('is composed before the first pre-step and passed to it', async () => {
    const h = await createHarness([textResponse('ok')])
    const order: string[] = []
    h.app.on('agent/session-prefix', async (_input, next) => {
      order.push('prefix')
      return [opening('catalog'), ...(await next())]
    })
    h.app.on('agent/pre-step', async ({ sessionPrefix }, next) => {
      order.push(`pre-step with ${texts(sessionPrefix).join(',')}`)
      return next()
    })
    await h.run('hi')
    expect(order).toEqual(['prefix', 'pre-step with catalog'])
  })

  it('a resumed instance recomposes, and the drift lands in its resume header', async () => {
    const h = await createHarness([textResponse('a1'), textResponse('a2')])
    let version = 1
    let compositions = 0
    h.app.on('agent/session-prefix', async (_input, next) => {
      compositions++
      return [opening(`catalog v${version}`), ...(await next())]
    })
    const first = await h.run('p1', { sessionId: SessionId('s-prefix') })
    await first.dispose()
    version = 2
    const second = await h.app.agentLoop.resume(SessionId('s-prefix'), { provider: 'test', model: 'm' })
    second.send(userText('p2'))
    await second.whenIdle()
    expect(compositions).toBe(2)
    const headers = dataOf<{ header: { messagePrefix: Message[] }; reason: string }>(
      second.session,
      'request/header',
    )
    expect(headers.map((data) => [data.reason, texts(data.header.messagePrefix)])).toEqual([
      ['initial', ['catalog v1']],
      ['resume', ['catalog v2']],
    ])
    expect(texts(h.model.requests[1]?.messages ?? [])).toEqual(['catalog v2', 'p1', 'a1', 'p2'])
  })

  it('a composition interrupted by cancel is discarded, never cached; the next turn recomposes', async () => {
    const h = await createHarness([textResponse('ok')])
    const hold = gate()
    let compositions = 0
    h.app.on('agent/session-prefix', async (_input, next) => {
      compositions++
      if (compositions === 1) {
        await hold.promise
        return [opening('stale fallback'), ...(await next())]
      }
      return [opening('fresh'), ...(await next())]
    })
    const agent = await h.create()
    agent.send(userText('first'))
    await new Promise((resolve) => setTimeout(resolve, 5))
    agent.cancel('user stop')
    await agent.whenIdle()
    hold.open()
    expect(types(agent.session)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'turn/end',
    ])
    expect(lastTurnEnd(agent.session)).toEqual({ kind: 'aborted', cause: 'user stop' })
    agent.send(userText('second'))
    await agent.whenIdle()
    expect(compositions).toBe(2)
    expect(texts(h.model.requests[0]?.messages ?? [])).toEqual(['fresh', 'second'])
  })
})
