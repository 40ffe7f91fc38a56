/**
 * The loop skips re-rendering the request header while nothing it is made of can have changed.
 * These tests change each input mid-turn (from a tool body, between two model calls) and check
 * that a `change` header is still recorded exactly when the header really changes.
 */
import type { Context } from 'cordis'
import { userText } from 'dsh-llm'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHarness, dataOf } from './harness.ts'

interface HeaderData {
  header: { system?: string; tools?: { name: string }[]; config: Record<string, unknown> }
  reason: string
}

/** Each `request/header` as `[reason, system, tool names]`. */
function headers(session: Parameters<typeof dataOf>[0]): [string, string | undefined, string[]][] {
  return dataOf<HeaderData>(session, 'request/header').map(({ reason, header }) => [
    reason,
    header.system,
    (header.tools ?? []).map((tool) => tool.name),
  ])
}

/** Registers tool `name` whose body runs `body` (once per call) and answers `ok`. */
function registerTool(app: Context, name: string, body: () => void = () => undefined): () => void {
  return app.tools.register({
    name,
    description: name,
    parameters: z.object({}),
    execute: () => {
      body()
      return 'ok'
    },
  })
}

/** A four-step turn: three calls of `step`, then a text answer. */
const FOUR_STEPS = [
  toolCallResponse('c1', 'step', {}),
  toolCallResponse('c2', 'step', {}),
  toolCallResponse('c3', 'step', {}),
  textResponse('done'),
]

describe('header re-rendering is skipped only while nothing can have changed', () => {
  it('a quiet agent records one initial header for a many-step turn', async () => {
    const h = await createHarness(FOUR_STEPS)
    registerTool(h.app, 'step')
    const agent = await h.run('go', { system: 'be brief' })
    expect(headers(agent.session)).toEqual([['initial', 'be brief', ['step']]])
    expect(h.model.requests.map((request) => request.system)).toEqual([
      'be brief',
      'be brief',
      'be brief',
      'be brief',
    ])
  })

  it('records a change when a system-prompt listener is registered mid-session, and when it goes', async () => {
    const h = await createHarness(FOUR_STEPS)
    let calls = 0
    let dispose: (() => void) | undefined
    registerTool(h.app, 'step', () => {
      calls++
      if (calls === 1) dispose = h.app.on('agent/system-prompt', async (_input, next) => `${await next()}!`)
      if (calls === 2) dispose?.()
    })
    const agent = await h.run('go', { system: 'be brief' })
    expect(headers(agent.session)).toEqual([
      ['initial', 'be brief', ['step']],
      ['change', 'be brief!', ['step']],
      ['change', 'be brief', ['step']],
    ])
    expect(h.model.requests.map((request) => request.system)).toEqual([
      'be brief',
      'be brief!',
      'be brief',
      'be brief',
    ])
  })

  it('records a change when an agent/request listener is registered mid-session', async () => {
    const h = await createHarness(FOUR_STEPS)
    let calls = 0
    registerTool(h.app, 'step', () => {
      calls++
      if (calls === 2)
        h.app.on('agent/request', async (_input, next) => ({ ...(await next()), maxTokens: 9 }))
    })
    const agent = await h.run('go')
    expect(dataOf<HeaderData>(agent.session, 'request/header').map((data) => data.reason)).toEqual([
      'initial',
      'change',
    ])
    expect(h.model.requests.map((request) => request.maxTokens)).toEqual([undefined, undefined, 9, 9])
  })

  it('records a change when a tool is registered or unregistered mid-turn', async () => {
    const h = await createHarness(FOUR_STEPS)
    let calls = 0
    let unregister: (() => void) | undefined
    registerTool(h.app, 'step', () => {
      calls++
      if (calls === 1) unregister = registerTool(h.app, 'extra')
      if (calls === 2) unregister?.()
    })
    const agent = await h.run('go')
    expect(headers(agent.session)).toEqual([
      ['initial', undefined, ['step']],
      ['change', undefined, ['step', 'extra']],
      ['change', undefined, ['step']],
    ])
    expect(h.model.requests.map((request) => (request.tools ?? []).map((tool) => tool.name))).toEqual([
      ['step'],
      ['step', 'extra'],
      ['step'],
      ['step'],
    ])
  })

  it('a registry change that does not touch the offered tools records nothing', async () => {
    const h = await createHarness(FOUR_STEPS)
    let calls = 0
    registerTool(h.app, 'step', () => {
      calls++
      if (calls === 1) registerTool(h.app, 'not-offered')
    })
    const agent = await h.run('go', { tools: ['step'] })
    expect(headers(agent.session)).toEqual([['initial', undefined, ['step']]])
  })

  it('a listener that leaves the header as it was records nothing, then the skip resumes', async () => {
    const h = await createHarness(FOUR_STEPS)
    let calls = 0
    let dispose: (() => void) | undefined
    let rendered = 0
    registerTool(h.app, 'step', () => {
      calls++
      if (calls === 1) {
        dispose = h.app.on('agent/system-prompt', async (_input, next) => {
          rendered++
          return next()
        })
      }
      if (calls === 2) dispose?.()
    })
    const agent = await h.run('go', { system: 'same' })
    expect(rendered).toBe(1)
    expect(headers(agent.session)).toEqual([['initial', 'same', ['step']]])
  })

  it('answers a request/header appended by someone else with a change back to the rendered header', async () => {
    const h = await createHarness(FOUR_STEPS)
    let calls = 0
    let append: (() => void) | undefined
    registerTool(h.app, 'step', () => {
      calls++
      if (calls === 1) append?.()
    })
    const agent = await h.create({ system: 'mine' })
    append = () => {
      agent.session.append('request/header', {
        header: { config: { provider: 'test', model: 'm' }, system: 'theirs' },
        reason: 'change',
      })
    }
    agent.send(userText('go'))
    await agent.whenIdle()
    expect(headers(agent.session)).toEqual([
      ['initial', 'mine', ['step']],
      ['change', 'theirs', []],
      ['change', 'mine', ['step']],
    ])
    expect(h.model.requests.map((request) => request.system)).toEqual(['mine', 'mine', 'mine', 'mine'])
  })
})
