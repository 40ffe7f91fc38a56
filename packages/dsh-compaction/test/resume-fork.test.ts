import { checkSessionLog } from 'dsh-invariants'
import { installInvariantGuard } from 'dsh-invariants/vitest'
import { userText } from 'dsh-llm'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import { foldMessages } from 'dsh-session'
import { describe, expect, test } from 'vitest'
import { compactingApp, windowModel } from './support.ts'

installInvariantGuard()

/** An agent that read four files, then compacted on demand between turns. */
async function compacted() {
  const app = await compactingApp({ compaction: { keepTokens: 1500 } })
  const { adapter, log } = windowModel(128_000, (_request, n) =>
    n < 4 ? toolCallResponse(`call-${n}`, 'read', { path: `file-${n}` }) : textResponse(`answer ${n}`),
  )
  app.llm.registerAdapter('test', adapter)
  const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
  await agent.prompt(userText('read four files'))
  const result = await app.compaction.compact(agent, { strategy: 'summarize' })
  expect(result.kind).toBe('completed')
  return { app, agent, log }
}

describe('across a compaction', () => {
  test('a resumed agent continues from the compacted surface, every request re-derived', async () => {
    const { app, agent, log } = await compacted()
    const surface = agent.session.deriveMessages()
    const id = agent.session.id
    await agent.dispose()
    const resumed = await app.agentLoop.resume(id, { provider: 'test', model: 'm' })
    expect(resumed.session.deriveMessages()).toEqual(surface)
    await resumed.prompt(userText('and now?'))
    const last = log.requests.at(-1)?.request
    expect(last?.messages.slice(0, surface.length)).toEqual(surface)
    expect(last?.messages[0]?.id).toBe('compaction-1:summary')
    expect(checkSessionLog(resumed.session.events.slice())).toEqual([])
  })

  test('a fork at every seq between turns — before, inside and after the compaction — is pre or post', async () => {
    const { app, agent } = await compacted()
    const events = agent.session.events.slice()
    const start = events.findIndex((event) => event.type === 'compaction/start')
    const end = events.findIndex((event) => event.type === 'compaction/end')
    const pre = foldMessages(events.slice(0, start))
    const post = foldMessages(events)
    const seen: string[] = []
    expect(end).toBe(start + 2)
    for (let seq = start; seq <= events.length; seq++) {
      const child = await app.sessions.fork(agent.session, seq)
      const surface = child.deriveMessages()
      const state = JSON.stringify(surface) === JSON.stringify(pre) ? 'pre' : 'post'
      expect(surface).toEqual(state === 'pre' ? pre : post)
      expect(checkSessionLog(child.events.slice(), { parent: child.parent ?? null })).toEqual([])
      seen.push(`${seq - start}:${state}`)
      await app.sessions.close(child)
    }
    // At the start and right after it: before (repair ends it interrupted). After the summary
    // replace: after (repair ends it completed), and after the end.
    expect(seen).toEqual(['0:pre', '1:pre', '2:post', '3:post'])
  })
})
