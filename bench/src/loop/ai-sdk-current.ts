/**
 * The Vercel AI SDK at its current release (`ai@7`, installed here as `ai-7`; Node ≥ 22) on the
 * workload, as `ai-sdk.ts` runs `ai@6` on Node 20: `streamText` with one tool and a hand-written
 * zero-latency model, here of the v4 model specification that `ai@7` providers implement; steps
 * are observed with `onStepEnd` (7's name for 6's `onStepFinish`).
 */
import { type LanguageModel, stepCountIs, streamText, tool } from 'ai-7'
import { z } from 'zod'
import type { StepRecorder } from '../recorder.ts'
import { PROMPT, type StepScript, stepScript, TOOL_DESCRIPTION, TOOL_NAME, TOOL_RESULT } from '../workload.ts'

type ModelV4 = Extract<LanguageModel, { readonly specificationVersion: 'v4' }>
type CallOptions = Parameters<ModelV4['doStream']>[0]
type StreamResult = Awaited<ReturnType<ModelV4['doStream']>>
type Part = StreamResult['stream'] extends ReadableStream<infer P> ? P : never

const USAGE = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 30, text: 30, reasoning: 0 },
}

function parts(script: StepScript): Part[] {
  const out: Part[] = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
  ]
  for (const delta of script.texts) out.push({ type: 'text-delta', id: 't', delta })
  out.push({ type: 'text-end', id: 't' })
  const call = script.call
  if (call !== undefined) {
    out.push({ type: 'tool-input-start', id: call.id, toolName: call.name })
    for (const delta of call.argDeltas) out.push({ type: 'tool-input-delta', id: call.id, delta })
    out.push({ type: 'tool-input-end', id: call.id })
    out.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.args })
  }
  out.push({
    type: 'finish',
    usage: USAGE,
    finishReason: { unified: call === undefined ? 'stop' : 'tool-calls', raw: undefined },
  })
  return out
}

/** A zero-latency model that streams step `n` of the script on its `n`-th call. */
function scriptedModel(steps: number): ModelV4 {
  let calls = 0
  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'scripted',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('the bench model only streams')),
    doStream: (_options: CallOptions) => {
      const chunks = parts(stepScript(calls++, steps))
      const stream = new ReadableStream<Part>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk)
          controller.close()
        },
      })
      return Promise.resolve({ stream })
    },
  }
}

/** Runs one `streamText` turn of `steps` steps, marking `recorder` as each step ends. */
export async function runAiSdk(steps: number, recorder: StepRecorder): Promise<void> {
  const tools = {
    [TOOL_NAME]: tool({
      description: TOOL_DESCRIPTION,
      inputSchema: z.object({ path: z.string() }),
      execute: async () => TOOL_RESULT,
    }),
  }
  await recorder.start()
  const result = streamText({
    model: scriptedModel(steps),
    prompt: PROMPT,
    tools,
    stopWhen: stepCountIs(steps + 1),
    onStepEnd: () => recorder.mark(),
  })
  for await (const _part of result.fullStream) {
    // An application consumes the stream; the parts themselves are not needed here.
  }
}
