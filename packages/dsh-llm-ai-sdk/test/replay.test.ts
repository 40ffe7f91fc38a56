/**
 * Must show: an agent turn with Claude thinking and two tool steps, saved to JSONL and resumed in a
 * fresh process; the next request body (as @ai-sdk/anthropic serializes it) carries every signature
 * and redacted block byte-identical, in order. The same through fork. Invariants mounted throughout.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { SessionId, userText } from 'dsh-llm'
import { JsonlStorage } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { AGENT_OPTIONS, agentApp, EXPECTED_REPLAY, opaqueInOrder, replayBlocks } from './agent.ts'
import * as fx from './fixtures/anthropic.ts'
import { bodyOf } from './recorded.ts'

const CHILD = fileURLToPath(new URL('./fixtures/resume-child.mjs', import.meta.url))

describe('Claude thinking replay across JSONL resume and fork', () => {
  it('every signature and redacted block returns byte-identical, in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-ai-sdk-'))
    const id = SessionId('claude-replay')
    const first = await agentApp([...fx.agentTurn, fx.nextTurn], new JsonlStorage({ dir }))
    const agent = await first.app.agentLoop.create({ ...AGENT_OPTIONS, sessionId: id })
    agent.send(userText('What is the weather and time in Paris?'))
    await agent.whenIdle()
    const bodies = first.recorded.requests.map((request) => request.body)
    expect(bodies).toHaveLength(3)
    // Within the turn: step 2 carries step 1's thinking; step 3 carries steps 1 and 2.
    expect(replayBlocks(bodies[1] ?? '')).toEqual(EXPECTED_REPLAY.slice(0, 1))
    expect(replayBlocks(bodies[2] ?? '')).toEqual(EXPECTED_REPLAY.slice(0, 3))
    const boundary = agent.session.events.length
    await agent.session.flush()

    // Fork at the end of the turn, in this process, and take the next turn on the fork.
    const fork = await first.app.sessions.fork(agent.session, boundary)
    const forked = await first.app.agentLoop.resume(fork.id, AGENT_OPTIONS)
    forked.send(userText('Thanks!'))
    await forked.whenIdle()
    const forkBody = first.recorded.requests[3]?.body ?? ''
    expect(replayBlocks(forkBody)).toEqual(EXPECTED_REPLAY)
    expect(opaqueInOrder(forkBody)).toEqual([
      fx.SIGNATURES.weather,
      fx.SIGNATURES.redacted,
      fx.SIGNATURES.second,
      fx.SIGNATURES.redactedSecond,
    ])
    await forked.dispose()
    await agent.dispose()
    await first.app.sessions.close(agent.session)
    expect(first.invariants.violations).toEqual([])
    expect(first.invariants.counters.requestsChecked).toBe(4)

    // A fresh process resumes the JSONL log and takes the same next turn.
    const bodyFile = join(dir, 'next-turn.sse')
    writeFileSync(bodyFile, bodyOf(fx.nextTurn))
    const { stdout } = await promisify(execFile)(process.execPath, [CHILD, dir, id, bodyFile], {
      env: { ...process.env, DSH_AGENT_OPTIONS: JSON.stringify(AGENT_OPTIONS) },
    })
    const child = JSON.parse(stdout) as { bodies: string[]; violations: string[]; requestsChecked: number }
    expect(child.violations).toEqual([])
    expect(child.requestsChecked).toBe(1)
    expect(child.bodies).toHaveLength(1)
    const resumedBody = child.bodies[0] ?? ''
    expect(replayBlocks(resumedBody)).toEqual(EXPECTED_REPLAY)
    // The whole body, not only the blocks: the resumed process sends what the fork sent.
    expect(resumedBody).toBe(forkBody)
  }, 60_000)
})
