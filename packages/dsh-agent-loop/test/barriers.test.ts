/**
 * The loop's durability barriers: before each model request and each tool body, every event logged
 * so far is durable in the store's backend. The loop waits for the backend only when something is
 * still pending; over a backend that stores each event as it commits, it never waits.
 */
import type { Agent } from 'dsh-agent-loop'
import { type LlmRequest, type SessionId, type StreamChunk, userText } from 'dsh-llm'
import { type ScriptStep, textResponse, toolCallResponse } from 'dsh-llm/testing'
import { MemoryStorage, type Session, type SessionEvent } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness } from './harness.ts'

/** A memory backend that takes batches (the session gets the group-commit writer) and records them. */
class BatchedStorage extends MemoryStorage {
  readonly batches: number[] = []
  override async appendBatch(id: SessionId, events: readonly SessionEvent[], expectedSeq: number) {
    await new Promise((resolve) => setTimeout(resolve, 1))
    await super.appendBatch(id, events, expectedSeq)
    this.batches.push(events.length)
  }
}

async function storedCount(storage: MemoryStorage, id: SessionId): Promise<number> {
  return (await storage.load(id)).events.length
}

const SCRIPT: readonly ScriptStep[] = [
  toolCallResponse('c1', 'probe', {}),
  toolCallResponse('c2', 'probe', {}),
  textResponse('done'),
]

/**
 * Runs SCRIPT over `storage`, recording at each model request and each tool body how many events
 * the session had logged and how many the backend held at that moment.
 */
async function runRecording(storage: MemoryStorage): Promise<{
  agent: Agent
  seen: { at: string; logged: number; stored: number }[]
  flushes: number
}> {
  const h = await createHarness(SCRIPT, { storage })
  let session: Session | undefined
  const seen: { at: string; logged: number; stored: number }[] = []
  const record = async (at: string) => {
    const live = session as Session
    seen.push({ at, logged: live.events.length, stored: await storedCount(storage, live.id) })
  }
  h.app.tools.register({
    name: 'probe',
    description: 'records what is durable when its body runs',
    parameters: z.object({}),
    execute: async () => {
      await record('tool')
      return 'ok'
    },
  })
  const model = h.model
  h.app.llm.registerAdapter('recording', {
    async *stream(request: LlmRequest): AsyncIterable<StreamChunk> {
      await record('request')
      yield* model.stream(request)
    },
  })
  const agent = await h.create({ provider: 'recording' })
  session = agent.session
  let flushes = 0
  const flush = session.flush.bind(session)
  session.flush = () => {
    flushes++
    return flush()
  }
  agent.send(userText('go'))
  await agent.whenIdle()
  return { agent, seen, flushes }
}

describe('durability barriers', () => {
  test('over a batching backend, everything logged is durable when a request is sent and when a tool body runs', async () => {
    const storage = new BatchedStorage()
    const { agent, seen, flushes } = await runRecording(storage)
    expect(seen.map((s) => s.at)).toEqual(['request', 'tool', 'request', 'tool', 'request'])
    for (const s of seen) expect(s.stored).toBe(s.logged)
    // The loop waited for the backend at every barrier: two per step with a tool call, one without.
    expect(flushes).toBe(5)
    expect(agent.session.isDurable()).toBe(false)
    await agent.session.flush()
    expect(agent.session.isDurable()).toBe(true)
  })

  test('over a backend that stores each event as it commits, the loop never waits at a barrier', async () => {
    const storage = new MemoryStorage()
    const { agent, seen, flushes } = await runRecording(storage)
    expect(seen.map((s) => s.at)).toEqual(['request', 'tool', 'request', 'tool', 'request'])
    for (const s of seen) expect(s.stored).toBe(s.logged)
    expect(flushes).toBe(0)
    expect(agent.session.isDurable()).toBe(true)
  })
})
