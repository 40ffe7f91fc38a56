/**
 * Every invariant check around the real agent loop. A recorded loop session must pass every check
 * online, re-derive offline to exactly the requests the model saw, and pass the CLI. (It lives here,
 * not in dsh-invariants, so that no package depends on dsh-agent-loop, not even for its tests.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { checkSessionLog, readRecordedLog, reconstructRequests } from 'dsh-invariants'
import { createCheckedApp, installInvariantGuard } from 'dsh-invariants/vitest'
import { loopRequestMark, markLoopRequest, SessionId, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse, toolCallsResponse } from 'dsh-llm/testing'
import { JsonlStorage } from 'dsh-session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { requireFreshBuild, run } from '../../dsh-invariants/test/cli-run.ts'

installInvariantGuard()

let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-invariants-loop-'))
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

async function loopApp(): Promise<Context> {
  const app = await createCheckedApp({ sessions: { storage: new JsonlStorage({ dir }) } })
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.tools.register({
    name: 'read',
    description: 'Reads a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => `contents of ${path}`,
  })
  app.on('agent/session-prefix', async (_input, next) => [
    userText('skills: read', { kind: 'plugin', plugin: 'skills' }),
    ...(await next()),
  ])
  // Turn 2 samples differently: the loop must log a `change` header, and the check must accept it.
  app.on('agent/request', async ({ turn }, next) => ({
    ...(await next()),
    ...(turn === 2 ? { temperature: 0.3 } : {}),
  }))
  return app
}

describe('a real agent turn with every check mounted', () => {
  it('passes online, re-derives offline to what the model saw, and passes the CLI', async () => {
    const app = await loopApp()
    const model = scriptedAdapter([
      toolCallsResponse([
        { id: 'c1', name: 'read', args: { path: 'a.txt' } },
        { id: 'c2', name: 'read', args: { path: 'b.txt' } },
      ]),
      textResponse('a and b differ'),
      textResponse('you are welcome', { deltas: 'words' }),
    ])
    app.llm.registerAdapter('scripted', model)
    const agent = await app.agentLoop.create({
      provider: 'scripted',
      model: 'script-1',
      system: 'You are terse.',
      sessionId: SessionId('loop-1'),
    })
    agent.send(userText('compare a and b'))
    await agent.whenIdle()
    agent.send(userText('thanks'))
    await agent.whenIdle()
    const session = agent.session
    await agent.dispose()

    expect(model.callCount).toBe(3)
    expect(app.invariants.counters).toEqual({
      requestsChecked: 3,
      requestsOutsideSteps: 0,
      eventsChecked: session.events.length,
      streamsChecked: 3,
    })
    expect(app.invariants.violations).toEqual([])
    const headers = session.events.filter((event) => event.type === 'request/header')
    expect(headers.map((event) => event.data.reason)).toEqual(['initial', 'change'])

    expect(reconstructRequests(session.events, session.id)).toEqual(model.requests)
    expect(checkSessionLog(session.events, { parent: null })).toEqual([])

    const file = join(dir, 'loop-1.jsonl')
    const recorded = readRecordedLog(file)
    expect(recorded.events).toEqual(session.events)
    requireFreshBuild()
    expect(run('check', file)).toEqual({
      status: 0,
      stdout: `dsh-invariants: checked 1 file: ${session.events.length} events, 2 turns, 3 requests re-derived, 0 violations\n`,
      stderr: '',
    })
    const printed = run('requests', file)
    expect(
      printed.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual(model.requests)
  })

  it('refuses a request a plugin smuggled a message into: the model is never called', async () => {
    const app = await loopApp()
    const model = scriptedAdapter([textResponse('never sent')])
    app.llm.registerAdapter('scripted', model)
    // A "middleware" that re-issues every loop request with one more message, keeping the mark.
    let reissuing = false
    app.on(
      'llm/stream',
      (request, next) => {
        const mark = loopRequestMark(request)
        if (reissuing || mark === undefined) return next()
        const smuggled = {
          ...request,
          messages: [...request.messages, userText('psst', { kind: 'plugin', plugin: 'mole' })],
        }
        markLoopRequest(smuggled, mark)
        reissuing = true
        try {
          return app.llm.stream(smuggled)
        } finally {
          reissuing = false
        }
      },
      { prepend: true },
    )
    const agent = await app.agentLoop.create({
      provider: 'scripted',
      model: 'script-1',
      sessionId: SessionId('loop-2'),
    })
    agent.send(userText('hello'))
    await agent.whenIdle()
    const session = agent.session
    await agent.dispose()
    expect(model.callCount).toBe(0)
    const [violation, ...others] = app.invariants.takeViolations()
    expect(others).toEqual([])
    expect(violation?.message).toMatch(
      /^the request marked for session loop-2 at log length 6 \(turn 1 step 1\) is not what the log implies \(header at seq 5\): field messages differs at index 2: the log implies 2 message\(s\): 1 prefix \+ 1 history, but the request carries 3; extra user message \S+ \(source plugin mole, text "psst"\)$/,
    )
    const end = session.events.at(-1)
    expect(end?.type).toBe('turn/end')
    expect(end?.data).toMatchObject({ turn: 1, reason: { kind: 'error', failure: { code: 'INVARIANT' } } })
  })
})
