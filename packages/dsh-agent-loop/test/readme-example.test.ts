/** The README example, run as written (console output captured and compared). */
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { LlmRuntime, messageText, userText } from 'dsh-llm'
import { scriptedAdapter, textResponse, toolCallResponse } from 'dsh-llm/testing'
import { Sessions } from 'dsh-session'
import { expect, it } from 'vitest'
import { z } from 'zod'

it('the README example prints what the README says', async () => {
  const printed: unknown[] = []
  const console = { log: (value: unknown) => printed.push(value) }

  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter(
    'scripted',
    scriptedAdapter([toolCallResponse('c1', 'add', { a: 2, b: 3 }), textResponse('2 + 3 = 5')]),
  )
  app.tools.register({
    name: 'add',
    description: 'Adds two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  })
  app.on('agent/pre-step', async (input, next) => {
    console.log(`turn ${input.turn} step ${input.step}`)
    return next()
  })

  const agent = await app.agentLoop.create({ provider: 'scripted', model: 'demo' })
  agent.send(userText('What is 2 + 3?'))
  await agent.whenIdle()
  console.log(agent.session.deriveMessages().map(messageText))
  await agent.dispose()

  expect(printed).toEqual(['turn 1 step 1', 'turn 1 step 2', ['What is 2 + 3?', '', '', '2 + 3 = 5']])
})
