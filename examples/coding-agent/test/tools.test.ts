/** Runs the tools of docs/tools.md (snippets/tools.ts) through the agent loop. */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { createCheckedApp } from 'dsh-invariants/vitest'
import { messageText, userText } from 'dsh-llm'
import {
  type ScriptStep,
  scriptedAdapter,
  textResponse,
  toolCallResponse,
  toolCallsResponse,
} from 'dsh-llm/testing'
import type { Session } from 'dsh-session'
import { describe, expect, it } from 'vitest'
import { FinishTool, ReadFileTool, RunTestsTool } from '../snippets/tools.ts'

async function stack(script: readonly ScriptStep[]) {
  const app = await createCheckedApp()
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  const model = scriptedAdapter(script)
  app.llm.registerAdapter('test', model)
  const run = async (prompt: string, tools?: readonly string[]) => {
    const agent = await app.agentLoop.create({ provider: 'test', model: 'm', ...(tools ? { tools } : {}) })
    agent.send(userText(prompt))
    await agent.whenIdle()
    return agent.session
  }
  return { app, model, run }
}

function results(session: Session) {
  return session.events.flatMap((event) =>
    event.type === 'tool/result'
      ? [{ text: messageText({ content: event.data.message.content[0].content }), error: event.data.error }]
      : [],
  )
}

describe('read_file', () => {
  const root = mkdtempSync(join(tmpdir(), 'dsh-tools-'))
  writeFileSync(join(root, 'notes.txt'), 'hello from notes\n')

  it('reads a file, applies the schema default, refuses a path outside the root', async () => {
    const { app, model, run } = await stack([
      toolCallsResponse([
        { id: 'c1', name: 'read_file', args: { path: 'notes.txt' } },
        { id: 'c2', name: 'read_file', args: { path: 'notes.txt', maxChars: 5 } },
        { id: 'c3', name: 'read_file', args: { path: '../etc/passwd' } },
      ]),
      textResponse('ok'),
    ])
    await app.plugin(ReadFileTool, { root })
    const session = await run('read it')
    expect(results(session)).toEqual([
      { text: 'hello from notes\n', error: undefined },
      { text: 'hello', error: undefined },
      { text: '../etc/passwd is outside the project', error: undefined },
    ])
    expect(model.requests[0]?.tools?.[0]).toEqual({
      name: 'read_file',
      description: 'Read a UTF-8 text file of the project.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'A path relative to the project root' },
          maxChars: { type: 'integer', exclusiveMinimum: 0, maximum: 9007199254740991, default: 20000 },
        },
        // `maxChars` has a default: the model may leave it out (the schema's input side).
        required: ['path'],
        additionalProperties: false,
      },
    })
  })

  it('does not run with arguments that break the schema; the error result says why', async () => {
    const { app, run } = await stack([
      toolCallResponse('c1', 'read_file', { file: 'notes.txt' }),
      textResponse('ok'),
    ])
    await app.plugin(ReadFileTool, { root })
    const session = await run('read it')
    expect(results(session)[0]?.error?.code).toBe('INVALID_TOOL_ARGUMENTS')
    expect(results(session)[0]?.text).toMatch(
      /^tool "read_file" \(call c1\): arguments do not match the schema: .*path/s,
    )
  })
})

describe('run_tests (exclusive)', () => {
  it('never runs next to another tool call of the same step', async () => {
    const { app, run } = await stack([
      toolCallsResponse([
        { id: 'c1', name: 'run_tests', args: {} },
        { id: 'c2', name: 'run_tests', args: {} },
      ]),
      textResponse('ok'),
    ])
    let running = 0
    let most = 0
    await app.plugin(RunTestsTool, {
      runTests: async () => {
        most = Math.max(most, ++running)
        await new Promise((resolve) => setTimeout(resolve, 20))
        running--
        return 'all 12 tests pass'
      },
    })
    const session = await run('test it')
    expect(most).toBe(1)
    expect(results(session).map((result) => result.text)).toEqual(['all 12 tests pass', 'all 12 tests pass'])
  })
})

describe('finish (concludeTurn)', () => {
  it('ends the turn after its step, with no further model call; only offered tools are sent', async () => {
    const { app, model, run } = await stack([toolCallResponse('c1', 'finish', { summary: 'fixed the bug' })])
    await app.plugin(FinishTool)
    await app.plugin(ReadFileTool, { root: tmpdir() })
    const session = await run('fix it', ['finish'])
    expect(model.callCount).toBe(1)
    expect(model.requests[0]?.tools?.map((tool) => tool.name)).toEqual(['finish'])
    expect(results(session)).toEqual([{ text: 'Recorded: fixed the bug', error: undefined }])
    expect(session.events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
  })
})
