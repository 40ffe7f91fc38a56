/** A two-turn coding session with parallel tools, run over a given adapter into a JSONL file. */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from 'cordis'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { Invariants } from 'dsh-invariants'
import { createUserMessage, type LlmAdapter, LlmRuntime, SessionId } from 'dsh-llm'
import { textResponse, toolCallResponse, toolCallsResponse } from 'dsh-llm/testing'
import { JsonlStorage, Sessions } from 'dsh-session'
import { z } from 'zod'

/** What the scripted model answers, in call order: the "real" model of the recording. */
export const SCRIPT = [
  toolCallsResponse(
    [
      { id: 'c1', name: 'read', args: { path: 'a.txt' } },
      { id: 'c2', name: 'read', args: { path: 'b.txt' } },
    ],
    { usage: { inputTokens: 40, outputTokens: 12 } },
  ),
  textResponse('a.txt says alpha, b.txt says beta.', {
    deltas: 'words',
    usage: { inputTokens: 70, outputTokens: 9 },
  }),
  toolCallResponse('c3', 'add', { a: 2, b: 3 }),
  textResponse('2 + 3 = 5'),
]

const FILES: Readonly<Record<string, string>> = { 'a.txt': 'alpha', 'b.txt': 'beta' }

/**
 * Runs the session `replay-demo` over `adapter` (provider `rec`, model `m`) with a clock that ticks
 * 1 ms per read from 1000 and user messages with fixed ids, in a JSONL store under `dir`, with every
 * invariant check mounted; `firstPrompt` replaces turn 1's prompt. Resolves with the session file's bytes.
 */
export async function runSession(
  adapter: LlmAdapter,
  dir: string,
  firstPrompt = 'What do a.txt and b.txt say?',
): Promise<string> {
  let tick = 1000
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, { storage: new JsonlStorage({ dir }), clock: () => tick++ })
  await app.plugin(Invariants)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter('rec', adapter)
  app.tools.register({
    name: 'read',
    description: 'Reads a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => FILES[path] ?? 'missing',
  })
  app.tools.register({
    name: 'add',
    description: 'Adds two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  })
  const agent = await app.agentLoop.create({
    provider: 'rec',
    model: 'm',
    sessionId: SessionId('replay-demo'),
  })
  const prompt = (id: string, text: string) =>
    createUserMessage({ id, content: [{ type: 'text', text }], source: { kind: 'user' } })
  agent.send(prompt('u1', firstPrompt))
  await agent.whenIdle()
  agent.send(prompt('u2', 'What is 2 + 3?'))
  await agent.whenIdle()
  await agent.dispose()
  await app.fiber.dispose()
  return readFile(join(dir, 'replay-demo.jsonl'), 'utf8')
}
