/**
 * Backpressure at the loop's boundaries: while a model stream is consumed, the loop waits for the
 * session to become writable whenever its unsynced events pass the store's high-water mark, so a
 * stalled backend stops the stream from being read instead of growing the writer's queue.
 */
import { Context } from 'cordis'
import AgentLoop, { ToolRegistry } from 'dsh-agent-loop'
import { type LlmAdapter, LlmRuntime, type SessionId, type StreamChunk, userText } from 'dsh-llm'
import { MemoryStorage, type SessionEvent, Sessions } from 'dsh-session'
import { describe, expect, test } from 'vitest'

const CHUNKS = 400
const CHUNK_TEXT = 'y'.repeat(16 * 1024)
const HIGH_WATER = 256 * 1024

/** A memory backend whose writes wait on a gate while it is closed. */
class GatedStorage extends MemoryStorage {
  gate: Promise<void> | undefined
  private openGate: (() => void) | undefined
  stall(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve
    })
  }
  resume(): void {
    this.openGate?.()
    this.gate = undefined
  }
  override async appendBatch(
    id: SessionId,
    events: readonly SessionEvent[],
    expectedSeq: number,
  ): Promise<void> {
    if (this.gate !== undefined) await this.gate
    return super.appendBatch(id, events, expectedSeq)
  }
}

describe('backpressure in the agent loop', () => {
  test('a stalled backend stops the stream from being read once the unsynced events pass the high-water mark', async () => {
    const storage = new GatedStorage()
    let pulled = 0
    const adapter: LlmAdapter = {
      async *stream(): AsyncIterable<StreamChunk> {
        storage.stall()
        yield { type: 'block-start', index: 0, blockType: 'text' }
        for (let i = 0; i < CHUNKS; i++) {
          pulled++
          yield { type: 'text-delta', index: 0, text: CHUNK_TEXT }
        }
        yield { type: 'block-end', index: 0, block: { type: 'text', text: CHUNK_TEXT.repeat(CHUNKS) } }
        yield { type: 'finish', reason: { kind: 'stop' } }
      },
    }
    const app = new Context()
    await app.plugin(LlmRuntime)
    await app.plugin(Sessions, { storage, highWaterMark: HIGH_WATER })
    await app.plugin(ToolRegistry)
    await app.plugin(AgentLoop)
    app.llm.registerAdapter('gated', adapter)
    const agent = await app.agentLoop.create({ provider: 'gated', model: 'm' })
    agent.send(userText('go'))
    await new Promise((resolve) => setTimeout(resolve, 100))
    // The queue may pass the mark by the chunk that crossed it, never by the whole stream.
    const bound = Math.ceil(HIGH_WATER / CHUNK_TEXT.length) + 1
    expect(pulled).toBeGreaterThan(0)
    expect(pulled).toBeLessThanOrEqual(bound)
    storage.resume()
    await agent.whenIdle()
    expect(pulled).toBe(CHUNKS)
    const chunks = agent.session.events.filter((e) => e.type === 'assistant/chunk').length
    expect(chunks).toBe(CHUNKS + 3)
    expect(agent.session.events.at(-1)?.type).toBe('turn/end')
    await agent.session.flush()
    expect(storage.gate).toBeUndefined()
  })
})
