/**
 * `node dist/hardening.js [rounds]`: what the agent loop's hardening (issue 13) costs per step of the
 * tool-loop workload, measured inside one process. Two variants run over the same chunk streams,
 * interleaved round by round, and are judged on the median across rounds:
 *   bare     every chunk logged as it came
 *   guarded  what the loop does per step for the hardening: a `StreamGuard` per stream, every chunk
 *            through `accept` (surrogate scan, tool-call id claim against the session's ids, usage
 *            and finish checks), the answered call id booked, the parsed arguments and the tool's
 *            string result made well-formed
 * Both parse the call's arguments (the loop does that with or without the hardening).
 * Tool-body deadlines cost nothing here: a tool that returns synchronously arms no timer.
 */
import { wellFormed, wellFormedJson } from 'dsh-llm'
import { StreamGuard, type TakenCallIds } from '../../packages/dsh-agent-loop/src/model/stream-guard.ts'
import { dshStepChunks } from './loop/dsh-chunks.ts'
import { median } from './stats.ts'
import { stepScript, TOOL_RESULT } from './workload.ts'

/** Steps per variant and round: one bench turn. */
const STEPS = 1000

/** The session's answered call ids, as the loop books them (`CallIdBook`). */
function callIdBook(): TakenCallIds & { add(id: string): void } {
  const ids = new Set<string>()
  return { has: (id) => ids.has(id), add: (id) => void ids.add(id), nextSuffix: new Map() }
}

let sink: unknown

function bare(turn: readonly (readonly ReturnType<typeof dshStepChunks>[number][])[]): void {
  for (const chunks of turn) {
    for (const chunk of chunks) {
      sink = chunk
      if (chunk.type === 'block-end' && chunk.block.type === 'tool-call')
        sink = JSON.parse(chunk.block.arguments)
    }
    sink = TOOL_RESULT
  }
}

function guarded(turn: readonly (readonly ReturnType<typeof dshStepChunks>[number][])[]): void {
  const book = callIdBook()
  for (const chunks of turn) {
    const guard = new StreamGuard(book, () => undefined)
    let callId: string | undefined
    for (const chunk of chunks) {
      const accepted = guard.accept(chunk)
      sink = accepted ?? chunk
      if (chunk.type === 'block-end' && chunk.block.type === 'tool-call') {
        callId = chunk.block.id
        sink = wellFormedJson(JSON.parse(chunk.block.arguments))
      }
    }
    if (callId !== undefined) book.add(callId)
    sink = wellFormed(TOOL_RESULT)
  }
}

function timeUs(run: () => void): number {
  const start = performance.now()
  run()
  return ((performance.now() - start) * 1000) / STEPS
}

function main(rounds: number): void {
  // One turn's chunks, with the workload's distinct call id per step.
  const turn = Array.from({ length: STEPS }, (_, step) => dshStepChunks(stepScript(step, STEPS + 1)))
  const samples = { bare: [] as number[], guarded: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    samples.bare.push(timeUs(() => bare(turn)))
    samples.guarded.push(timeUs(() => guarded(turn)))
  }
  // The first rounds include compilation; judge the rest.
  const warm = Math.min(3, rounds - 1)
  const bareUs = median(samples.bare.slice(warm))
  const guardedUs = median(samples.guarded.slice(warm))
  const deltas = samples.guarded.slice(warm).map((value, i) => value - (samples.bare[warm + i] ?? 0))
  console.log(
    `hardening per tool-loop step (${STEPS} steps × ${rounds} rounds, median of rounds ${warm + 1}+)`,
  )
  console.log(`  bare     ${bareUs.toFixed(2)} µs/step`)
  console.log(`  guarded  ${guardedUs.toFixed(2)} µs/step`)
  console.log(
    `  cost     ${(guardedUs - bareUs).toFixed(2)} µs/step (per-round ${Math.min(...deltas).toFixed(2)}–${Math.max(...deltas).toFixed(2)})`,
  )
  if (sink === undefined) throw new Error('unreachable: the sink keeps the work observable')
}

main(Number(process.argv[2] ?? 15))
