import { createUserMessage, newCallId, newMessageId, newSessionId, setIdSource, userText } from 'dsh-llm'
import { afterEach, describe, expect, it } from 'vitest'

afterEach(() => setIdSource(undefined))

describe('setIdSource', () => {
  it('mints every id from the given source until reset, then randomly again', () => {
    let n = 0
    setIdSource(() => `id${++n}`)
    expect([newMessageId(), newCallId(), newSessionId()]).toEqual(['id1', 'call_id2', 'id3'])
    expect(userText('hi').id).toBe('id4')
    expect(createUserMessage({ content: [], source: { kind: 'user' } }).id).toBe('id5')
    expect(createUserMessage({ id: 'mine', content: [], source: { kind: 'user' } }).id).toBe('mine')
    setIdSource(undefined)
    expect(newMessageId()).toMatch(/^[\w-]{21}$/)
    expect(n).toBe(5)
  })

  it('refuses a source that returns an empty or non-string id, naming it', () => {
    setIdSource(() => '')
    expect(() => newMessageId()).toThrow(
      new TypeError('setIdSource: the id source returned "", not a non-empty string'),
    )
    expect(() => setIdSource(42 as unknown as () => string)).toThrow(
      new TypeError('setIdSource: expected a function or undefined, got 42'),
    )
  })
})
