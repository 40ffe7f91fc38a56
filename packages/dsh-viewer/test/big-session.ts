/** A synthetic, valid session log of a given size: long streamed answers, one request per turn. */
import type { SessionEvent } from 'dsh-session'

/**
 * `turns` turns, each: turn/start, step/start, user/message, (a request/header in turn 1), a text
 * answer streamed in `deltas` text-delta chunks, assistant/message, step/end, turn/end. Times advance
 * 1 ms per event from 1_000_000. Events number `turns * (deltas + 9) + 1`.
 */
export function bigSession(turns: number, deltas: number): SessionEvent[] {
  const events: SessionEvent[] = []
  const push = (type: string, data: unknown) =>
    events.push({ type, seq: events.length, time: 1_000_000 + events.length, data } as SessionEvent)
  for (let turn = 1; turn <= turns; turn++) {
    push('turn/start', { turn, trigger: { kind: 'send', target: 'next-turn' } })
    push('step/start', { turn, step: 1 })
    push('user/message', {
      id: `u${turn}`,
      role: 'user',
      content: [{ type: 'text', text: `question ${turn}` }],
      source: { kind: 'user' },
    })
    if (turn === 1)
      push('request/header', {
        header: { config: { provider: 'p', model: 'm' }, system: 'Be brief.' },
        reason: 'initial',
      })
    const chunk = (c: unknown) => push('assistant/chunk', { turn, step: 1, chunk: c })
    chunk({ type: 'block-start', index: 0, blockType: 'text' })
    const words: string[] = []
    for (let i = 0; i < deltas; i++) {
      words.push(`w${i} `)
      chunk({ type: 'text-delta', index: 0, text: `w${i} ` })
    }
    const text = words.join('')
    chunk({ type: 'block-end', index: 0, block: { type: 'text', text } })
    chunk({ type: 'usage', usage: { inputTokens: 10 * turn, outputTokens: deltas } })
    chunk({ type: 'finish', reason: { kind: 'stop' } })
    push('assistant/message', {
      turn,
      step: 1,
      message: {
        id: `a${turn}`,
        role: 'assistant',
        content: [{ type: 'text', text }],
        source: { kind: 'model', provider: 'p', model: 'm' },
      },
      usage: { inputTokens: 10 * turn, outputTokens: deltas },
    })
    push('step/end', { turn, step: 1 })
    push('turn/end', { turn, reason: { kind: 'completed' } })
  }
  return events
}

/** The JSONL text of `events` as a dsh session file (header line first). */
export function sessionFile(events: readonly SessionEvent[], sessionId: string): string {
  const header = { format: 'dsh-session', version: 1, sessionId, createdAt: 1_000_000 }
  return `${[header, ...events].map((line) => JSON.stringify(line)).join('\n')}\n`
}
