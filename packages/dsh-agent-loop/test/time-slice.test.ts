/**
 * The process-wide time slice: a long model stream that never waits (every chunk already there)
 * must not hold the event loop for its whole length; timers keep firing while it is consumed.
 */
import { Context } from 'cordis'
import AgentLoop, { ToolRegistry } from 'dsh-agent-loop'
import { type LlmAdapter, LlmRuntime, type StreamChunk, userText } from 'dsh-llm'
import { nextSlice, Sessions, SLICE_MS, sliceSpent } from 'dsh-session'
import { describe, expect, test, vi } from 'vitest'

const DELTAS = 20_000

/** One answer of `DELTAS` text deltas, all available at once (a zero-latency stream). */
const longAnswer: LlmAdapter = {
  async *stream(): AsyncIterable<StreamChunk> {
    yield { type: 'block-start', index: 0, blockType: 'text' }
    for (let i = 0; i < DELTAS; i++) yield { type: 'text-delta', index: 0, text: 'x' }
    yield { type: 'block-end', index: 0, block: { type: 'text', text: 'x'.repeat(DELTAS) } }
    yield { type: 'finish', reason: { kind: 'stop' } }
  },
}

/** An app with the loop's plugins and `adapter` registered as provider `name`. */
async function appWith(name: string, adapter: LlmAdapter): Promise<Context> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter(name, adapter)
  return app
}

/**
 * Counts, per event-loop turn (the stretch between two runs of a self-renewing immediate), the
 * events of `type` logged later than the slice (plus 2 ms of slack) after the turn's first one.
 */
function lateEvents(app: Context, type: string): { stop(): { late: number; turns: number } } {
  let turnStart: number | undefined
  let late = 0
  let turns = 0
  let ticking = true
  const tick = () => {
    turnStart = undefined
    turns++
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  app.sessions.onEvent((_session, event) => {
    if (event.type !== type) return
    const now = performance.now()
    if (turnStart === undefined) turnStart = now
    else if (now - turnStart > SLICE_MS + 2) late++
  })
  return {
    stop: () => {
      ticking = false
      return { late, turns }
    },
  }
}

describe('time slice', () => {
  test('a 20,000-chunk zero-latency stream lets a 1 ms timer fire while it is consumed, and logs every chunk', async () => {
    const app = await appWith('long', longAnswer)
    const agent = await app.agentLoop.create({ provider: 'long', model: 'm' })
    const gaps: number[] = []
    let last = performance.now()
    const ticker = setInterval(() => {
      const now = performance.now()
      gaps.push(now - last)
      last = now
    }, 1)
    const started = performance.now()
    agent.send(userText('go'))
    await agent.whenIdle()
    const elapsed = performance.now() - started
    clearInterval(ticker)
    const chunks = agent.session.events.filter((e) => e.type === 'assistant/chunk').length
    expect(chunks).toBe(DELTAS + 3)
    expect(agent.session.events.at(-1)?.type).toBe('turn/end')
    // Without the slice the whole turn runs in one event-loop turn and the timer never fires while
    // it runs. With it the timer fires between slices; on a loaded machine a slice may take longer
    // than its 5 ms of work, so the bound is loose: at least one tick per 50 ms of turn.
    expect(gaps.length).toBeGreaterThanOrEqual(Math.max(3, Math.floor(elapsed / 50)))
  })

  test('agents resumed into a spent slice log nothing in it: no event-loop turn runs far past the slice', async () => {
    const AGENTS = 300
    const CHUNKS = 40
    const short: LlmAdapter = {
      async *stream(): AsyncIterable<StreamChunk> {
        yield { type: 'block-start', index: 0, blockType: 'text' }
        for (let i = 0; i < CHUNKS; i++) yield { type: 'text-delta', index: 0, text: 'x' }
        yield { type: 'block-end', index: 0, block: { type: 'text', text: 'x'.repeat(CHUNKS) } }
        yield { type: 'finish', reason: { kind: 'stop' } }
      },
    }
    const app = await appWith('short', short)
    const agents = []
    for (let i = 0; i < AGENTS; i++)
      agents.push(await app.agentLoop.create({ provider: 'short', model: 'm' }))
    const counter = lateEvents(app, 'assistant/chunk')
    for (const agent of agents) agent.send(userText('go'))
    await Promise.all(agents.map((agent) => agent.whenIdle()))
    const { late, turns } = counter.stop()
    const logged = agents.reduce(
      (sum, agent) => sum + agent.session.events.filter((e) => e.type === 'assistant/chunk').length,
      0,
    )
    expect(logged).toBe(AGENTS * (CHUNKS + 3))
    // Without the check before each logged chunk, every agent resumed in a turn whose slice is
    // already spent logs one chunk: hundreds of late chunks per turn. With it, only a chunk whose
    // own append crossed the bound (a GC pause, a slow machine) is late: at most about one per turn.
    expect(late).toBeLessThanOrEqual(turns)
  })

  test('agents woken together start their steps across event-loop turns, not all in one', async () => {
    const AGENTS = 300
    // The answer comes after a timer, so no chunk is in hand while the steps start: only the check
    // at the step start can spread them out.
    const late: LlmAdapter = {
      async *stream(): AsyncIterable<StreamChunk> {
        await new Promise((resolve) => setTimeout(resolve, 5))
        yield { type: 'block-start', index: 0, blockType: 'text' }
        yield { type: 'text-delta', index: 0, text: 'x' }
        yield { type: 'block-end', index: 0, block: { type: 'text', text: 'x' } }
        yield { type: 'finish', reason: { kind: 'stop' } }
      },
    }
    const app = await appWith('late', late)
    const agents = []
    for (let i = 0; i < AGENTS; i++) agents.push(await app.agentLoop.create({ provider: 'late', model: 'm' }))
    // The first request of each: the first step waits for the slice after logging its claimed batch.
    const counter = lateEvents(app, 'request/header')
    for (const agent of agents) agent.send(userText('go'))
    await Promise.all(agents.map((agent) => agent.whenIdle()))
    const { late: lateSteps, turns } = counter.stop()
    for (const agent of agents) expect(agent.session.events.at(-1)?.type).toBe('turn/end')
    // Without the check, all 300 first requests (header, derivation) run in the event-loop turn of
    // the sends: most of them late.
    expect(lateSteps).toBeLessThanOrEqual(turns)
  })

  test('a send into a spent slice logs its claimed message before the step waits for the slice', async () => {
    const app = await appWith('short-answer', {
      async *stream(): AsyncIterable<StreamChunk> {
        yield { type: 'block-start', index: 0, blockType: 'text' }
        yield { type: 'text-delta', index: 0, text: 'ok' }
        yield { type: 'block-end', index: 0, block: { type: 'text', text: 'ok' } }
        yield { type: 'finish', reason: { kind: 'stop' } }
      },
    })
    const agent = await app.agentLoop.create({ provider: 'short-answer', model: 'm' })
    // A first turn composes and caches the session prefix (the one await a fresh loop instance has
    // before its first step).
    agent.send(userText('warm up'))
    await agent.whenIdle()
    // Start from a fresh event-loop turn, then use up its slice, as 1,000 sends in a loop would.
    await new Promise((resolve) => setImmediate(resolve))
    sliceSpent()
    const until = performance.now() + SLICE_MS + 1.5
    while (performance.now() < until) {
      // other agents' work
    }
    agent.send(userText('task'))
    // Synchronously inside send: claim, step start and the claimed message, in one run (one batch),
    // so no crash or takeover can land between the claim and the message.
    const types = agent.session.events.map((event) => event.type)
    expect(types.slice(-3)).toEqual(['agent/inbox/spliced', 'step/start', 'user/message'])
    await agent.whenIdle()
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 2, reason: { kind: 'completed' } })
  })

  test('waiters resume in the order they waited, each into a slice with room, never into a spent one', async () => {
    const spend = () => {
      const until = performance.now() + SLICE_MS + 1.5
      while (performance.now() < until) {
        // agent work that uses up a whole slice
      }
    }
    // Start from a fresh event-loop turn, then use up its slice.
    await new Promise((resolve) => setImmediate(resolve))
    sliceSpent()
    spend()
    expect(sliceSpent()).toBe(true)
    const resumed: { readonly waiter: number; readonly room: boolean }[] = []
    await Promise.all(
      Array.from({ length: 6 }, async (_, waiter) => {
        await nextSlice()
        resumed.push({ waiter, room: !sliceSpent() })
        spend()
      }),
    )
    expect(resumed).toEqual(Array.from({ length: 6 }, (_, waiter) => ({ waiter, room: true })))
  })

  test('a reader waiting for the next slice when the turn is cancelled appends nothing when it wakes', async () => {
    const app = await appWith('long', longAnswer)
    const agent = await app.agentLoop.create({ provider: 'long', model: 'm' })
    // Every append the loop attempts, refused ones included (a refused append throws inside the
    // stream reader, where nobody hears it).
    const refused: string[] = []
    const session = agent.session
    const append = session.append.bind(session)
    session.append = ((type: string, data: unknown) => {
      try {
        return append(type as never, data as never)
      } catch (error) {
        refused.push(`${type}: ${error instanceof Error ? error.message : String(error)}`)
        throw error
      }
    }) as typeof session.append
    agent.send(userText('go'))
    // A zero-latency stream reaches a timer only while its reader waits for the next slice.
    await new Promise((resolve) => setTimeout(resolve, 3))
    agent.cancel('stop')
    await agent.whenIdle()
    // The reader's wake-up (an immediate) comes after the cancelled turn has closed.
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'aborted', cause: 'stop' } })
    expect(refused).toEqual([])
  })
})

describe('clock reads', () => {
  test('a streamed chunk costs one clock read: the slice check and the chunk time share it', async () => {
    const CHUNKS = 200
    const dateNow = Date.now
    const performanceNow = performance.now.bind(performance)
    let reads = 0
    // Installed before the app, so the store's clock is this `Date.now` too.
    const dateSpy = vi.spyOn(Date, 'now').mockImplementation(() => {
      reads++
      return dateNow()
    })
    const performanceSpy = vi.spyOn(performance, 'now').mockImplementation(() => {
      reads++
      return performanceNow()
    })
    try {
      const app = await appWith('counted', {
        async *stream(): AsyncIterable<StreamChunk> {
          yield { type: 'block-start', index: 0, blockType: 'text' }
          for (let i = 0; i < CHUNKS; i++) yield { type: 'text-delta', index: 0, text: 'x' }
          yield { type: 'block-end', index: 0, block: { type: 'text', text: 'x'.repeat(CHUNKS) } }
          yield { type: 'finish', reason: { kind: 'stop' } }
        },
      })
      const agent = await app.agentLoop.create({ provider: 'counted', model: 'm' })
      reads = 0
      agent.send(userText('go'))
      await agent.whenIdle()
      const chunks = agent.session.events.filter((event) => event.type === 'assistant/chunk')
      expect(chunks).toHaveLength(CHUNKS + 3)
      // One read per chunk, plus one per other event and two per slice the stream waited for; two
      // per chunk when the slice check and the chunk's time each read a clock.
      expect(reads).toBeLessThan(CHUNKS * 1.2)
    } finally {
      dateSpy.mockRestore()
      performanceSpy.mockRestore()
    }
  })
})
