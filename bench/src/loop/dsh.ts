/**
 * dsh on the workload: LlmRuntime + Sessions (in memory or JSONL) [+ every invariant check] +
 * ToolRegistry + AgentLoop in one cordis app, a zero-latency adapter that plays the script, one
 * registered tool. Step ends are observed with `sessions.onEvent` (`step/end`).
 */
import { Context } from 'cordis'
import { type Agent, AgentLoop, ToolRegistry } from 'dsh-agent-loop'
import { type CheckName, Invariants, type InvariantsConfig } from 'dsh-invariants'
import { type LlmAdapter, LlmRuntime, type StreamChunk, userText } from 'dsh-llm'
import { JsonlStorage, nodeAppendIo, Sessions } from 'dsh-session'
import { z } from 'zod'
import type { StepRecorder } from '../recorder.ts'
import type { ScaleRun } from '../scenarios/scale.ts'
import { PROMPT, responseDelayMs, stepScript, TOOL_DESCRIPTION, TOOL_NAME, TOOL_RESULT } from '../workload.ts'
import { dshStepChunks, replay } from './dsh-chunks.ts'

/** How the dsh loop is configured: in-memory store, JSONL store, or in-memory with every invariant check. */
export type DshLoopMode = 'memory' | 'jsonl' | 'invariants'

const PROVIDER = 'bench'

/**
 * A zero-latency adapter: the `n`-th request of a session streams step `n` of a `steps`-step
 * script through a plain async generator. It keeps one counter per session and nothing else (no
 * request is retained). With `spread`, each response first waits `responseDelayMs` (scenario 5).
 */
function scriptedAdapter(steps: number, spread: boolean): LlmAdapter {
  const calls = new Map<string, { readonly agent: number; n: number }>()
  return {
    stream(request): AsyncIterable<StreamChunk> {
      const key = request.sessionId ?? ''
      let state = calls.get(key)
      if (state === undefined) {
        state = { agent: calls.size, n: 0 }
        calls.set(key, state)
      }
      const n = state.n++
      const delay = spread ? responseDelayMs(state.agent, n) : 0
      return replay(dshStepChunks(stepScript(n, steps)), delay)
    },
  }
}

/**
 * `BENCH_APPEND_DELAY_US`: a busy wait of that many µs of this process's CPU time inside every
 * append (an append guard), to simulate a regression of the append path. The quick-bench regression
 * test sets it and expects the step-cost bounds to fail; nothing else does. CPU time, not wall time:
 * on a loaded machine real work takes longer in wall time too, and a wall-clock wait would shrink
 * against it (the bound then missed the injected regression under load).
 */
function injectedAppendDelay(app: Context): void {
  const us = Number(process.env.BENCH_APPEND_DELAY_US ?? 0)
  if (!(us > 0)) return
  const cpu = () => {
    const usage = process.cpuUsage()
    return usage.user + usage.system
  }
  app.sessions.guard(() => {
    const until = cpu() + us
    while (cpu() < until) {
      // spin: the delay must be CPU time inside append, like real work
    }
  })
}

/**
 * `BENCH_INVARIANTS_ONLY`: a comma-separated list of check names to mount instead of all of them (the
 * invariants config's `only`), to split the checked loop's overhead between the checks.
 */
function invariantsConfig(): InvariantsConfig {
  const only = process.env.BENCH_INVARIANTS_ONLY
  if (only === undefined || only === '') return {}
  return { only: only.split(',').map((name) => name.trim()) as CheckName[] }
}

/**
 * `BENCH_JSONL_SYNC`: how the JSONL harnesses sync (`dsh-jsonl`'s `JsonlStorage` and `floor-jsonl`):
 * unset is each one's default (`auto`; the floor `fdatasyncSync`), `inline` and `thread-pool` force
 * dsh's mode, `none` skips every sync on both sides (the write stays), which leaves the CPU side of
 * a barrier, free of the disk's noise.
 */
function jsonlStorage(dir: string): JsonlStorage {
  const mode = process.env.BENCH_JSONL_SYNC
  if (mode === undefined || mode === '') return new JsonlStorage({ dir })
  if (mode === 'none')
    return new JsonlStorage({ dir, io: { write: nodeAppendIo.write, sync: async () => undefined } })
  if (mode === 'inline' || mode === 'thread-pool' || mode === 'auto')
    return new JsonlStorage({ dir, sync: mode })
  throw new Error(`BENCH_JSONL_SYNC: ${mode} is not none, inline, thread-pool or auto`)
}

async function createApp(mode: DshLoopMode, dir: string, steps: number, spread = false): Promise<Context> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, mode === 'jsonl' ? { storage: jsonlStorage(dir) } : {})
  injectedAppendDelay(app)
  if (mode === 'invariants') await app.plugin(Invariants, invariantsConfig())
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter(PROVIDER, scriptedAdapter(steps, spread))
  app.tools.register({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: z.object({ path: z.string() }),
    execute: () => TOOL_RESULT,
  })
  return app
}

/**
 * Throws unless the agent's last turn ended `completed`, and (`steps` given) after `steps` steps.
 * The loop run leaves `steps` out: its recorder counted every `step/end` as it was logged, and
 * reading the whole log back would add work in proportion to the turn to an instruction count.
 */
function expectCompleted(agent: Agent, steps?: number): void {
  const events = agent.session.events
  const last = events[events.length - 1]
  if (last?.type !== 'turn/end' || last.data.reason.kind !== 'completed') {
    throw new Error(`dsh: the turn did not complete: last event ${JSON.stringify(last)}`)
  }
  if (steps === undefined) return
  const stepEnds = events.filter((e) => e.type === 'step/end').length
  if (stepEnds !== steps) throw new Error(`dsh: ${stepEnds} steps logged, ${steps} expected`)
}

/** Runs one dsh turn of `steps` steps, marking `recorder` at each `step/end`. */
export async function runDshLoop(
  steps: number,
  recorder: StepRecorder,
  mode: DshLoopMode,
  dir: string,
): Promise<void> {
  const app = await createApp(mode, dir, steps)
  // The workload's turn is `steps` steps long: past the default step limit (DEFAULT_MAX_STEPS).
  const agent = await app.agentLoop.create({ provider: PROVIDER, model: 'scripted', maxSteps: steps })
  // The per-event listener API (a plain call), not `ctx.on`, whose tracing proxy costs per event.
  app.sessions.onEvent((_session, event) => {
    if (event.type === 'step/end') recorder.mark()
  })
  await recorder.start()
  agent.send(userText(PROMPT))
  await agent.whenIdle()
  // The step count is the recorder's (`runLoop` checks it).
  expectCompleted(agent)
  await agent.dispose()
}

/** `agents` dsh agents in one app (in-memory store), each to run one `steps`-step turn (scenario 5). */
export async function dshScaleRun(agents: number, steps: number): Promise<ScaleRun> {
  const app = await createApp('memory', '', steps, true)
  const list: Agent[] = []
  for (let i = 0; i < agents; i++)
    list.push(await app.agentLoop.create({ provider: PROVIDER, model: 'scripted', maxSteps: steps }))
  return {
    agents: list,
    start: async () => {
      for (const agent of list) agent.send(userText(PROMPT))
      await Promise.all(list.map((agent) => agent.whenIdle()))
    },
    // Outside the measured run: reading 1,000 logs back is the check's cost, not the agents'.
    verify: () => {
      for (const agent of list) expectCompleted(agent, steps)
    },
  }
}
