/**
 * pi-mono's agent core at its current release (`@earendil-works/pi-agent-core` 1.6, Node ≥ 22.19)
 * on the workload, driven like `pi-agent.ts` drives the 0.73 release that Node 20 can run: a
 * custom stream function plays the script with zero latency, the tool's parameters are built with
 * `@earendil-works/pi-schema` (the 1.x way). The two releases' types differ, so each has its driver.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, type AgentTool, type StreamFn } from '@earendil-works/pi-agent-core'
import {
  type AssistantMessage,
  createAssistantMessageEventStream,
  type JsonObject,
  type Model,
  type TextContent,
  type ToolCall,
} from '@earendil-works/pi-ai'
import { obj, str } from '@earendil-works/pi-schema'
import type { StepRecorder } from '../recorder.ts'
import { PROMPT, responseDelayMs, stepScript, TOOL_DESCRIPTION, TOOL_NAME, TOOL_RESULT } from '../workload.ts'

const MODEL: Model<'bench'> = {
  id: 'scripted',
  name: 'Scripted',
  api: 'bench',
  provider: 'bench',
  baseUrl: '',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 100_000,
}

const USAGE = {
  input: 100,
  output: 30,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 130,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
}

const PARAMETERS = obj({ path: str() })

/** The one tool, shared by every agent as an application would share its tool definitions. */
const READ_FILE: AgentTool<typeof PARAMETERS> = {
  name: TOOL_NAME,
  label: 'Read file',
  description: TOOL_DESCRIPTION,
  parameters: PARAMETERS,
  execute: async () => ({ content: [{ type: 'text', text: TOOL_RESULT }], details: undefined }),
}

/**
 * A stream function that, on its `n`-th call, streams step `n`: it mutates one partial message as
 * a provider client does and pushes pi's events for it (argument JSON is parsed once, at the end
 * of the call). With `agent`, each response first waits `responseDelayMs` (scenario 5).
 */
function scriptedStream(steps: number, agent?: number): StreamFn {
  let calls = 0
  return async () => {
    const n = calls++
    if (agent !== undefined) await sleep(responseDelayMs(agent, n))
    const script = stepScript(n, steps)
    const stream = createAssistantMessageEventStream()
    const partial: AssistantMessage = {
      role: 'assistant',
      content: [],
      api: 'bench',
      provider: 'bench',
      model: 'scripted',
      usage: USAGE,
      stopReason: 'stop',
      timestamp: Date.now(),
    }
    stream.push({ type: 'start', partial })
    const text: TextContent = { type: 'text', text: '' }
    partial.content.push(text)
    stream.push({ type: 'text_start', contentIndex: 0, partial })
    for (const delta of script.texts) {
      text.text += delta
      stream.push({ type: 'text_delta', contentIndex: 0, delta, partial })
    }
    stream.push({ type: 'text_end', contentIndex: 0, content: text.text, partial })
    const call = script.call
    if (call !== undefined) {
      const toolCall: ToolCall = { type: 'toolCall', id: call.id, name: call.name, arguments: {} }
      partial.content.push(toolCall)
      stream.push({ type: 'toolcall_start', contentIndex: 1, partial })
      for (const delta of call.argDeltas)
        stream.push({ type: 'toolcall_delta', contentIndex: 1, delta, partial })
      toolCall.arguments = JSON.parse(call.args) as JsonObject
      stream.push({ type: 'toolcall_end', contentIndex: 1, toolCall, partial })
      partial.stopReason = 'toolUse'
    }
    stream.push({ type: 'done', reason: call === undefined ? 'stop' : 'toolUse', message: partial })
    return stream
  }
}

/** Runs one pi-agent-core prompt of `steps` steps (pi calls a step a "turn"), marking each. */
export async function runPiAgent(steps: number, recorder: StepRecorder): Promise<void> {
  const agent = new Agent({
    initialState: { systemPrompt: '', model: MODEL, tools: [READ_FILE] },
    streamFn: scriptedStream(steps),
  })
  agent.subscribe((event) => {
    if (event.type === 'turn_end') recorder.mark()
  })
  await recorder.start()
  await agent.prompt(PROMPT)
}

/** `agents` pi agents, each to run one `steps`-step prompt concurrently (scenario 5). */
export async function piScaleRun(agents: number, steps: number) {
  const list = Array.from(
    { length: agents },
    (_, agent) =>
      new Agent({
        initialState: { systemPrompt: '', model: MODEL, tools: [READ_FILE] },
        streamFn: scriptedStream(steps, agent),
      }),
  )
  return {
    agents: list,
    start: async () => {
      await Promise.all(list.map((agent) => agent.prompt(PROMPT)))
    },
  }
}
