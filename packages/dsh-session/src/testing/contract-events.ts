/** Valid events and headers for the storage contract: small, deterministic, schema-checked. */
import { MessageId, type SessionId } from 'dsh-llm'
import { SESSION_FORMAT_VERSION } from '../storage/jsonl/codec.ts'
import type { SessionEvent, SessionFileHeader } from '../types.ts'

/** A header for `sessionId` created at `createdAt`. */
export function contractHeader(sessionId: SessionId, createdAt = 1_700_000_000_000): SessionFileHeader {
  return { format: 'dsh-session', version: SESSION_FORMAT_VERSION, sessionId, createdAt }
}

/** A `user/message` event at `seq` whose one text block is `text`; `time` is derived from `seq`. */
export function contractEvent(seq: number, text = `message ${seq}`): SessionEvent {
  return {
    type: 'user/message',
    seq,
    time: 1_700_000_000_000 + seq,
    data: {
      id: MessageId(`m${seq}`),
      role: 'user',
      content: [{ type: 'text', text }],
      source: { kind: 'user' },
    },
  }
}

/** `count` events with seqs `from`, `from + 1`, ... */
export function contractEvents(from: number, count: number): SessionEvent[] {
  return Array.from({ length: count }, (_, i) => contractEvent(from + i))
}
