import { createUserMessage, newCallId, newMessageId, newSessionId, setIdSource, userText } from 'dsh-llm'
import { urlAlphabet } from 'nanoid'
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

describe('random ids', () => {
  it("are 21 characters of nanoid's alphabet, distinct across pool refills, call ids behind call_", () => {
    const alphabet = new Set(urlAlphabet)
    const seen = new Set<string>()
    const used = new Set<string>()
    // 1,000 ids: the random pool (128 ids' worth of bytes) is refilled several times.
    for (let i = 0; i < 1000; i++) {
      const id = i % 2 === 0 ? newMessageId() : newSessionId()
      expect(id).toHaveLength(21)
      for (const character of id) {
        expect(alphabet.has(character)).toBe(true)
        used.add(character)
      }
      seen.add(id)
    }
    expect(seen.size).toBe(1000)
    // 21,000 random characters cover the 64-character alphabet.
    expect(used.size).toBe(64)
    const call = newCallId()
    expect(call).toMatch(/^call_[\w-]{21}$/)
    expect(alphabet.has(call.slice(5, 6))).toBe(true)
  })
})
