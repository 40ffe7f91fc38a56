/** The workload's steps as dsh `StreamChunk`s: what the scripted adapter and the floor replay. */

import { setTimeout as sleep } from 'node:timers/promises'
import { CallId, type StreamChunk } from 'dsh-llm'
import { STEP_TEXT, type StepScript } from '../workload.ts'

const USAGE: StreamChunk = Object.freeze({
  type: 'usage',
  usage: Object.freeze({ inputTokens: 100, outputTokens: 30 }),
})

/**
 * The chunks of one step: a text block of 20 deltas, then (except on the last step) a tool-call
 * block of four argument deltas, then usage and finish. 30 chunks for a tool step, 24 for the last.
 */
export function dshStepChunks(script: StepScript): StreamChunk[] {
  const chunks: StreamChunk[] = [{ type: 'block-start', index: 0, blockType: 'text' }]
  for (const text of script.texts) chunks.push({ type: 'text-delta', index: 0, text })
  chunks.push({ type: 'block-end', index: 0, block: { type: 'text', text: STEP_TEXT } })
  const call = script.call
  if (call !== undefined) {
    const id = CallId(call.id)
    chunks.push({ type: 'block-start', index: 1, blockType: 'tool-call' })
    call.argDeltas.forEach((argumentsDelta, i) => {
      chunks.push(
        i === 0
          ? { type: 'tool-call-delta', index: 1, id, name: call.name, argumentsDelta }
          : { type: 'tool-call-delta', index: 1, argumentsDelta },
      )
    })
    chunks.push({
      type: 'block-end',
      index: 1,
      block: { type: 'tool-call', id, name: call.name, arguments: call.args },
    })
  }
  chunks.push(USAGE)
  chunks.push({ type: 'finish', reason: { kind: call === undefined ? 'stop' : 'tool-calls' } })
  return chunks
}

/** Yields `chunks` one by one after `delayMs` (if any): a plain async generator, the cheapest transport. */
export async function* replay(chunks: readonly StreamChunk[], delayMs = 0): AsyncGenerator<StreamChunk> {
  if (delayMs > 0) await sleep(delayMs)
  for (const chunk of chunks) yield chunk
}
