/** dsh on the workload (filled in as dsh-agent-loop lands). */
import type { StepRecorder } from '../recorder.ts'
import type { ScaleRun } from '../scenarios/scale.ts'

/** How the dsh loop is configured: in-memory store, JSONL store, or in-memory with every invariant check. */
export type DshLoopMode = 'memory' | 'jsonl' | 'invariants'

/** Runs one dsh turn of `steps` steps. */
export async function runDshLoop(
  _steps: number,
  _recorder: StepRecorder,
  _mode: DshLoopMode,
  _dir: string,
): Promise<void> {
  throw new Error('dsh-agent-loop is not available yet')
}

/** `agents` dsh agents for scenario 5. */
export async function dshScaleRun(_agents: number, _steps: number): Promise<ScaleRun> {
  throw new Error('dsh-agent-loop is not available yet')
}
