import { SessionId } from 'dsh-llm'
import {
  canonicalHeader,
  composeRequest,
  foldRequestHeader,
  headersEqual,
  type RequestHeader,
} from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { assistant, mountSessions, user } from './support.ts'

const config = { provider: 'p', model: 'm' }
const tool = { name: 'read', description: 'Reads a file', parameters: { type: 'object' } }

describe('canonicalHeader and headersEqual', () => {
  test('empty system, tools and messagePrefix become absent; the result is frozen; the input is untouched', () => {
    const input: RequestHeader = { config, system: '', tools: [], messagePrefix: [] }
    const canonical = canonicalHeader(input)
    expect(canonical).toEqual({ config })
    expect(Object.keys(canonical)).toEqual(['config'])
    expect(Object.isFrozen(canonical)).toBe(true)
    expect(Object.isFrozen(canonical.config)).toBe(true)
    expect(input.system).toBe('')
  })

  test('non-empty parts are kept', () => {
    const header = { config, system: 'be brief', tools: [tool], messagePrefix: [user('p1')] }
    expect(canonicalHeader(header)).toEqual(header)
  })

  test('headers equal after canonicalisation, ignoring key order; any difference counts', () => {
    expect(headersEqual({ config, system: '' }, { config, tools: [] })).toBe(true)
    expect(headersEqual({ config: { model: 'm', provider: 'p' } }, { config })).toBe(true)
    expect(headersEqual({ config }, { config: { ...config, temperature: 0 } })).toBe(false)
    expect(headersEqual({ config, system: 'a' }, { config, system: 'b' })).toBe(false)
    expect(headersEqual({ config, tools: [tool] }, { config, tools: [{ ...tool, description: 'x' }] })).toBe(
      false,
    )
    expect(headersEqual({ config, messagePrefix: [user('p1')] }, { config })).toBe(false)
  })
})

describe('requestHeader fold', () => {
  test('the latest request/header snapshot wins, canonicalised, with its reason and seq', async () => {
    const app = await mountSessions()
    const session = await app.sessions.create()
    expect(session.requestHeader()).toBeUndefined()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    session.append('request/header', { header: { config, system: '' }, reason: 'initial' })
    expect(session.requestHeader()).toEqual({ header: { config }, reason: 'initial', seq: 1 })
    session.append('request/header', { header: { config, system: 'new', tools: [tool] }, reason: 'change' })
    const state = session.requestHeader()
    expect(state).toEqual({ header: { config, system: 'new', tools: [tool] }, reason: 'change', seq: 2 })
    expect(Object.isFrozen(state)).toBe(true)
    expect(foldRequestHeader(session.events)).toEqual(state)
    expect(foldRequestHeader(session.events.slice(0, 2))).toEqual({
      header: { config },
      reason: 'initial',
      seq: 1,
    })
    expect(foldRequestHeader([])).toBeUndefined()
  })
})

describe('composeRequest', () => {
  test('takes config scalars that are present, system, prefix before history, tools and the session id', () => {
    const history = Object.freeze([user('u1'), assistant('a1', [{ type: 'text', text: 'hi' }])])
    const header: RequestHeader = {
      config: {
        provider: 'p',
        model: 'm',
        temperature: 0.2,
        maxTokens: 100,
        reasoningEffort: 'low',
        stop: ['END'],
      },
      system: 'be brief',
      tools: [tool],
      messagePrefix: [user('prefix')],
    }
    const request = composeRequest(header, history, { sessionId: SessionId('s1') })
    expect(request).toEqual({
      provider: 'p',
      model: 'm',
      temperature: 0.2,
      maxTokens: 100,
      reasoningEffort: 'low',
      stop: ['END'],
      system: 'be brief',
      messages: [user('prefix'), ...history],
      tools: [tool],
      sessionId: 's1',
    })
    expect(Object.keys(request)).toEqual([
      'provider',
      'model',
      'temperature',
      'maxTokens',
      'reasoningEffort',
      'stop',
      'system',
      'messages',
      'tools',
      'sessionId',
    ])
    expect(Object.isFrozen(request)).toBe(true)
    expect(Object.isFrozen(request.messages)).toBe(true)
    expect(Object.isFrozen(request.tools?.[0]?.parameters)).toBe(true)
  })

  test('absent and empty parts stay absent; with no prefix the history array is used as is', () => {
    const history = Object.freeze([user('u1')])
    const request = composeRequest({ config: { provider: 'p', model: 'm' }, system: '', tools: [] }, history)
    expect(request).toEqual({ provider: 'p', model: 'm', messages: [user('u1')] })
    expect(Object.keys(request)).toEqual(['provider', 'model', 'messages'])
    expect(request.messages).toBe(history)
  })

  test('the signal is attached but not frozen', () => {
    const controller = new AbortController()
    const request = composeRequest({ config }, [], { signal: controller.signal })
    expect(request.signal).toBe(controller.signal)
    expect(Object.isFrozen(controller.signal)).toBe(false)
    expect(Object.isFrozen(request)).toBe(true)
  })
})
