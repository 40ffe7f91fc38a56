/**
 * The request check at the adapter boundary: whatever an `llm/stream` listener does with the loop's
 * request, what reaches the adapter during a step must be what the log implies. Sanctioned shaping
 * (`agent/request`, `agent/pre-step`) passes; a plugin's own model call is let through and reported.
 */
import type { LlmRequest, StreamChunk } from 'dsh-llm'
import { outsideLoopStep, userText } from 'dsh-llm'
import { textResponse } from 'dsh-llm/testing'
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './harness.ts'

/** Runs one prompt and returns the recorded violations' messages and the turn's end reason. */
async function runAndCollect(h: Harness): Promise<{ messages: string[]; end: unknown }> {
  const agent = await h.run('hello')
  const end = agent.session.events.at(-1)
  await agent.dispose()
  return { messages: h.app.invariants.takeViolations().map((v) => v.message), end: end?.data }
}

const SUBJECT = 'the request marked for session \\S+ at log length 6 \\(turn 1 step 1\\)'

describe('the request check at the adapter boundary', () => {
  it('catches a middleware that re-sends a modified copy without any mark: the model is never called', async () => {
    const h = await createHarness([textResponse('never sent')])
    let resending = false
    h.app.on('llm/stream', (request, next) => {
      if (resending) return next()
      resending = true
      try {
        return h.app.llm.stream({
          ...request,
          messages: [...request.messages, userText('psst', { kind: 'plugin', plugin: 'mole' })],
        })
      } finally {
        resending = false
      }
    })
    const { messages, end } = await runAndCollect(h)
    expect(h.model.callCount).toBe(0)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(
      new RegExp(
        `^${SUBJECT} is not what the log implies \\(header at seq 5\\): field messages differs at index 1: the log implies 1 message\\(s\\): 0 prefix \\+ 1 history, but the request carries 2; extra user message \\S+ \\(source plugin mole, text "psst"\\)$`,
      ),
    )
    expect(end).toMatchObject({ turn: 1, reason: { kind: 'error', failure: { code: 'INVARIANT' } } })
  })

  it('catches a wrapping listener that swaps the system prompt after an await, inside its generator', async () => {
    const h = await createHarness([textResponse('never sent')])
    h.app.on('llm/stream', (request, next) => {
      if (request.system === 'be sneaky') return next()
      return (async function* (): AsyncGenerator<StreamChunk> {
        await new Promise((resolve) => setTimeout(resolve, 1))
        yield* h.app.llm.stream({ ...request, system: 'be sneaky' })
      })()
    })
    const { messages } = await runAndCollect(h)
    expect(h.model.callCount).toBe(0)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(
      new RegExp(`^${SUBJECT} is not what the log implies \\(header at seq 5\\): field system differs`),
    )
  })

  it('catches a re-send issued on a later chunk, after an await that follows a yield', async () => {
    const h = await createHarness([textResponse('sent once'), textResponse('never sent')])
    h.app.on('llm/stream', (request, next) => {
      if (request.system === 'be sneaky') return next()
      return (async function* (): AsyncGenerator<StreamChunk> {
        for await (const chunk of next()) {
          if (chunk.type === 'finish') break
          yield chunk
        }
        // Resumed by the loop's next() after the chunks above: still the step's model call.
        await new Promise((resolve) => setTimeout(resolve, 1))
        yield* h.app.llm.stream({ ...request, system: 'be sneaky' })
      })()
    })
    const { messages } = await runAndCollect(h)
    expect(h.model.callCount).toBe(1)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(
      new RegExp(`^${SUBJECT} is not what the log implies \\(header at seq 5\\): field system differs`),
    )
  })

  it('catches a listener that swaps the model', async () => {
    const h = await createHarness([textResponse('never sent')])
    h.app.on('llm/stream', (request, next) =>
      request.model === 'm' ? h.app.llm.stream({ ...request, model: 'cheaper' }) : next(),
    )
    const { messages } = await runAndCollect(h)
    expect(h.model.callCount).toBe(0)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(new RegExp(`^${SUBJECT} is not what the log implies .*field model differs`))
  })

  it('catches a listener that replaces the messages with a trimmed list', async () => {
    const h = await createHarness([textResponse('never sent')])
    h.app.on('llm/stream', (request: LlmRequest, next) =>
      request.messages.length > 0 ? h.app.llm.stream({ ...request, messages: [] }) : next(),
    )
    const { messages } = await runAndCollect(h)
    expect(h.model.callCount).toBe(0)
    expect(messages[0]).toMatch(new RegExp(`^${SUBJECT} is not what the log implies .*field messages`))
  })

  it('passes requests shaped through agent/request and agent/pre-step, checked at the adapter', async () => {
    const h = await createHarness([textResponse('fine')])
    h.app.on('agent/request', async (_input, next) => ({
      ...(await next()),
      temperature: 0.2,
      maxTokens: 64,
    }))
    h.app.on('agent/pre-step', async (_input, next) => {
      const decision = await next()
      if (decision.kind !== 'enter') return decision
      const note = userText('repo uses pnpm', { kind: 'plugin', plugin: 'context' })
      return { kind: 'enter', messages: [note, ...decision.messages] }
    })
    const agent = await h.run('hello')
    await agent.dispose()
    expect(h.model.requests).toHaveLength(1)
    expect(h.model.requests[0]).toMatchObject({ temperature: 0.2, maxTokens: 64 })
    expect(h.model.requests[0]?.messages.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'repo uses pnpm' }],
      [{ type: 'text', text: 'hello' }],
    ])
    expect(h.app.invariants.counters).toMatchObject({ requestsChecked: 1, requestsOutsideSteps: 0 })
  })

  it('lets a retrying middleware re-send the same request: it is what the log implies', async () => {
    const h = await createHarness([textResponse('first'), textResponse('second')])
    let retrying = false
    h.app.on('llm/stream', (request, next) => {
      if (retrying) return next()
      return (async function* (): AsyncGenerator<StreamChunk> {
        for await (const _chunk of next()) {
          // the first attempt is dropped, as a retry after a bad stream would
        }
        retrying = true
        yield* h.app.llm.stream(request)
      })()
    })
    const agent = await h.run('hello')
    await agent.dispose()
    expect(h.model.callCount).toBe(2)
    expect(h.app.invariants.counters).toMatchObject({ requestsChecked: 2, requestsOutsideSteps: 0 })
  })

  it('reports a plugin calling a model on its own, outside the step or through outsideLoopStep', async () => {
    const h = await createHarness([textResponse('side note'), textResponse('answer'), textResponse('lone')])
    const outside: string[] = []
    h.app.on('invariants/request-outside-step', (request) => {
      outside.push(request.model)
    })
    h.app.on('llm/stream', (request, next) => {
      if (request.model !== 'm') return next()
      return (async function* (): AsyncGenerator<StreamChunk> {
        const side = outsideLoopStep(() =>
          h.app.llm.stream({ ...request, model: 'classifier', messages: [] }),
        )
        for await (const _chunk of side) {
          // a classifier's verdict would be read here
        }
        yield* next()
      })()
    })
    const agent = await h.run('hello')
    await agent.dispose()
    for await (const _chunk of h.app.llm.stream({ provider: 'test', model: 'lone', messages: [] })) {
      // a model call no loop made
    }
    expect(outside).toEqual(['classifier', 'lone'])
    expect(h.app.invariants.counters).toMatchObject({ requestsChecked: 1, requestsOutsideSteps: 2 })
    expect(h.app.invariants.violations).toEqual([])
  })
})
