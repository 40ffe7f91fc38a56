/** The agent's call-id book: folded from the surface on first use, kept as an array between turns. */
import { CallId, type Message, MessageId } from 'dsh-llm'
import type { Session } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { CallIdLedger } from '../src/call-id-ledger.ts'

function sessionWith(messages: Message[]): { session: Session; folds: () => number } {
  let folds = 0
  const session = {
    deriveMessages: () => {
      folds++
      return messages
    },
  } as unknown as Session
  return { session, folds: () => folds }
}

const history: Message[] = [
  {
    id: MessageId('m1'),
    role: 'assistant',
    content: [{ type: 'tool-call', id: CallId('a'), name: 'read', arguments: '{}' }],
    source: { kind: 'model', provider: 'p', model: 'm' },
  },
  {
    id: MessageId('m2'),
    role: 'user',
    content: [{ type: 'tool-result', toolCallId: CallId('b'), content: [{ type: 'text', text: 'ok' }] }],
    source: { kind: 'tool', callId: CallId('b') },
  },
]

describe('CallIdLedger', () => {
  it('folds the surface on the first has, once, and only then takes adds', () => {
    const { session, folds } = sessionWith(history)
    const ledger = new CallIdLedger(session)
    ledger.add('early')
    expect(folds()).toBe(0)
    expect(ledger.has('a')).toBe(true)
    expect(ledger.has('b')).toBe(true)
    expect(ledger.has('early')).toBe(false)
    ledger.add('c')
    expect(ledger.has('c')).toBe(true)
    expect(folds()).toBe(1)
  })

  it('keeps every id and rename hint across settle, without folding again', () => {
    const { session, folds } = sessionWith(history)
    const ledger = new CallIdLedger(session)
    expect(ledger.has('x')).toBe(false)
    ledger.add('x')
    ledger.nextSuffix.set('a', 3)
    ledger.settle()
    ledger.settle()
    expect(ledger.has('x')).toBe(true)
    expect(ledger.has('a')).toBe(true)
    expect(ledger.has('y')).toBe(false)
    expect(ledger.nextSuffix.get('a')).toBe(3)
    ledger.settle()
    ledger.add('z')
    expect(ledger.has('z')).toBe(true)
    expect(folds()).toBe(1)
  })

  it('settling before any fold leaves the fold to the next has', () => {
    const { session, folds } = sessionWith(history)
    const ledger = new CallIdLedger(session)
    ledger.settle()
    expect(folds()).toBe(0)
    expect(ledger.has('b')).toBe(true)
    expect(folds()).toBe(1)
  })
})
