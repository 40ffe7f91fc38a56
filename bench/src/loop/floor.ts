/**
 * The floor: a bare loop that streams the same chunks through an async generator and appends the
 * same ~35 events per step (step start, each chunk, the message, the call, the result, step end)
 * to an array. Optionally it also writes them as JSONL and syncs at the barriers dsh awaits.
 */
import { closeSync, fdatasyncSync, fsyncSync, openSync, writeSync } from 'node:fs'
import type { StepRecorder } from '../recorder.ts'
import { STEP_TEXT, stepScript, TOOL_RESULT } from '../workload.ts'
import { dshStepChunks, replay } from './dsh-chunks.ts'

/** How the floor persists its events. */
export type FloorPersistence =
  | { readonly kind: 'memory' }
  /**
   * JSONL at `file`: the events since the last barrier are serialized and written with one
   * `writeSync`, then synced with `sync` — at each of `barriersPerStep` points of a step (1:
   * before the model call; 2: also before the tool body).
   */
  | {
      readonly kind: 'jsonl'
      readonly file: string
      readonly sync: 'none' | 'fsync' | 'fdatasync'
      readonly barriersPerStep: 1 | 2
    }

interface FloorEvent {
  readonly type: string
  readonly seq: number
  readonly time: number
  readonly data: unknown
}

/** Runs the floor loop for `steps` steps, marking `recorder` at the end of each step. */
export async function runFloor(steps: number, recorder: StepRecorder, persistence: FloorPersistence) {
  const log: FloorEvent[] = []
  const fd = persistence.kind === 'jsonl' ? openSync(persistence.file, 'w') : -1
  let flushed = 0
  const append = (type: string, data: unknown) => {
    log.push({ type, seq: log.length, time: Date.now(), data })
  }
  const barrier = () => {
    if (persistence.kind !== 'jsonl') return
    let text = ''
    for (let i = flushed; i < log.length; i++) text += `${JSON.stringify(log[i])}\n`
    flushed = log.length
    writeSync(fd, text)
    if (persistence.sync === 'fsync') fsyncSync(fd)
    else if (persistence.sync === 'fdatasync') fdatasyncSync(fd)
  }
  const twoBarriers = persistence.kind === 'jsonl' && persistence.barriersPerStep === 2
  await recorder.start()
  append('user/message', { role: 'user', content: [{ type: 'text', text: 'go' }] })
  for (let step = 0; step < steps; step++) {
    const script = stepScript(step, steps)
    append('step/start', { step })
    barrier()
    for await (const chunk of replay(dshStepChunks(script))) append('assistant/chunk', { step, chunk })
    append('assistant/message', { step, message: { role: 'assistant', text: STEP_TEXT } })
    if (script.call !== undefined) {
      append('tool/call', { step, callId: script.call.id, name: script.call.name })
      if (twoBarriers) barrier()
      append('tool/result', { step, callId: script.call.id, content: TOOL_RESULT })
    }
    append('step/end', { step })
    recorder.mark()
  }
  barrier()
  if (fd >= 0) closeSync(fd)
  return log.length
}
