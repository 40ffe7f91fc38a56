import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import Compaction from 'dsh-compaction'
import { LlmRuntime, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse, toolCallResponse } from 'dsh-llm/testing'
import { Sessions } from 'dsh-session'
import { buildViewData } from 'dsh-viewer'
import { expect, it } from 'vitest'
import { z } from 'zod'

it('shows each compaction: what it replaced, the summary, and the tokens before and after', async () => {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  await app.plugin(Compaction, { auto: false, keepTokens: 10 })
  app.tools.register({
    name: 'read',
    description: 'Reads a file.',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => `${path} `.repeat(500),
  })
  app.llm.registerAdapter(
    'test',
    scriptedAdapter([
      toolCallResponse('c1', 'read', { path: 'a' }),
      textResponse('read it'),
      textResponse('The user had file a read.'),
    ]),
  )
  const agent = await app.agentLoop.create({ provider: 'test', model: 'm' })
  await agent.prompt(userText('read a'))
  const result = await app.compaction.compact(agent, { strategy: 'summarize' })
  expect(result.kind).toBe('completed')
  const events = agent.session.events.slice()
  const data = buildViewData({ file: 'compacted.jsonl', events })
  const start = events.findIndex((event) => event.type === 'compaction/start')
  expect(data.violations).toEqual([])
  expect(data.compactions).toEqual([
    {
      id: 'compaction-1',
      start,
      end: start + 2,
      trigger: 'manual',
      strategy: 'summarize',
      tokensBefore: result.kind === 'completed' ? result.tokensBefore : -1,
      tokensAfter: result.kind === 'completed' ? result.tokensAfter : -1,
      announced: 1,
      replaces: [start + 1],
      replaced: 3,
      summary:
        'Summary of the earlier conversation (the messages it stands for were compacted):\n\nThe user had file a read.',
      outcome: 'completed',
    },
  ])
})
