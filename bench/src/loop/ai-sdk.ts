/**
 * The Vercel AI SDK (`ai@6`) on the workload: `streamText` with one tool and a hand-written
 * zero-latency `LanguageModel` (v3 spec). The packaged mock model is not used: it keeps every
 * prompt it receives, which would distort memory figures.
 */
import { type LanguageModel, stepCountIs, streamText, tool } from 'ai'
import { z } from 'zod'
import type { StepRecorder } from '../recorder.ts'
import { PROMPT, type StepScript, stepScript, TOOL_DESCRIPTION, TOOL_NAME, TOOL_RESULT } from '../workload.ts'

type ModelV3 = Extract<LanguageModel, { readonly specificationVersion: 'v3' }>
type CallOptions = Parameters<ModelV3['doStream']>[0]
type StreamResult = Awaited<ReturnType<ModelV3['doStream']>>
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
function scriptedModel(steps: number): ModelV3 {
  let calls = 0
  return {
    specificationVersion: 'v3',
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

/** Runs one `streamText` turn of `steps` steps, marking `recorder` as each step finishes. */
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
    onStepFinish: () => recorder.mark(),
  })
  for await (const _part of result.fullStream) {
    // An application consumes the stream; the parts themselves are not needed here.
  }
}
