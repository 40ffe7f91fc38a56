/** Replay metadata (`providerData`) on blocks and the cache policy in the header (issue 32). */
import { validateEvent } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { refusal } from './support.ts'

const signed = {
  type: 'reasoning',
  text: 'Let me think.',
  providerData: { anthropic: { signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxB' } },
}
const redacted = {
  type: 'reasoning',
  text: '',
  providerData: { anthropic: { redactedData: 'EmwKAhgBEgy3va3p' } },
}
const call = {
  type: 'tool-call',
  id: 'c1',
  name: 'get_weather',
  arguments: '{"location":"Paris"}',
  providerData: { google: { thoughtSignature: 'CiQB0e2K', nested: { list: [1, null, 'x'] } } },
}

function assistant(content: unknown[]) {
  return {
    type: 'assistant/message',
    seq: 7,
    time: 1,
    data: {
      turn: 1,
      step: 1,
      message: { id: 'a1', role: 'assistant', content, source: { kind: 'model', provider: 'p', model: 'm' } },
    },
  }
}

describe('providerData on content blocks', () => {
  test('an assistant message whose blocks carry provider data is valid and kept as given', () => {
    const value = assistant([
      signed,
      redacted,
      { type: 'text', text: 'Hi', providerData: { openai: { itemId: 'msg_1' } } },
      call,
    ])
    const before = JSON.stringify(value)
    const event = validateEvent(value)
    expect(event).toBe(value)
    expect(JSON.stringify(event)).toBe(before)
  })

  test('a block-end chunk may carry it too', () => {
    const value = {
      type: 'assistant/chunk',
      seq: 3,
      time: 1,
      data: { turn: 1, step: 1, chunk: { type: 'block-end', index: 0, block: signed } },
    }
    expect(validateEvent(value)).toBe(value)
  })

  test.each([
    [{ ...signed, providerData: { anthropic: 'sig' } }, 'data.message.content[0].providerData.anthropic'],
    [{ ...signed, providerData: 'sig' }, 'data.message.content[0].providerData'],
    [
      { ...call, providerData: { google: { at: () => 1 } } },
      'data.message.content[0].providerData.google.at',
    ],
  ])(
    'provider data that is not JSON objects keyed by provider is refused at its path (%#)',
    (block, path) => {
      const found = refusal(() => validateEvent(assistant([block])))
      expect(found?.code).toBe('INVALID_EVENT')
      expect(found?.message.startsWith(`invalid assistant/message event at seq 7: ${path}: `)).toBe(true)
    },
  )
})

describe('cachePolicy in the request header', () => {
  const header = (cachePolicy: unknown) => ({
    type: 'request/header',
    seq: 2,
    time: 1,
    data: { header: { config: { provider: 'p', model: 'm', cachePolicy } }, reason: 'initial' },
  })

  test('a cache policy is valid in the header', () => {
    const value = header({ breakpoints: 'auto', ttl: '1h', prefixMessages: 2 })
    expect(validateEvent(value)).toBe(value)
  })

  test('an unknown breakpoints mode is refused at its path', () => {
    const found = refusal(() => validateEvent(header({ breakpoints: 'everywhere' })))
    expect(found?.code).toBe('INVALID_EVENT')
    expect(
      found?.message.startsWith(
        'invalid request/header event at seq 2: data.header.config.cachePolicy.breakpoints: ',
      ),
    ).toBe(true)
  })
})
