/** Setups shared by the invariants tests: a checked app with a scripted model and one driven session. */
import { readFileSync, writeFileSync } from 'node:fs'
import type { Context } from 'cordis'
import { type CheckedAppOptions, createCheckedApp } from 'dsh-invariants/vitest'
import { SessionId } from 'dsh-llm'
import {
  type ScriptedAdapter,
  type ScriptStep,
  scriptedAdapter,
  textResponse,
  toolCallResponse,
  toolCallsResponse,
} from 'dsh-llm/testing'
import { expandRunLine, isRunLine, type Session } from 'dsh-session'
import { Driver } from './driver.ts'

/** What `scriptedSession` builds. */
export interface ScriptedSession {
  readonly app: Context
  /** The model registered as provider `scripted`; it records every request it was asked. */
  readonly adapter: ScriptedAdapter
  readonly session: Session
  readonly driver: Driver
}

/**
 * A checked app (built with `options`) playing `script` as provider `scripted`, a new session with
 * id `id` and a driver over it.
 */
export async function scriptedSession(
  script: readonly ScriptStep[],
  id: string,
  options: CheckedAppOptions = {},
): Promise<ScriptedSession> {
  const app = await createCheckedApp(options)
  const adapter = scriptedAdapter(script)
  app.llm.registerAdapter('scripted', adapter)
  const session = await app.sessions.create({ id: SessionId(id) })
  return { app, adapter, session, driver: new Driver(app, session) }
}

/** The script `recordReadTurn` plays: a call `c1` of `read` on `a`, then the answer `it says A`. */
export const READ_TURN_SCRIPT: readonly ScriptStep[] = [
  toolCallResponse('c1', 'read', { path: 'a' }),
  textResponse('it says A'),
]

/**
 * Records through `driver` a two-step turn over `READ_TURN_SCRIPT`: the prompt `what does a say?`
 * (id `m-q`), a step calling `read` and logging its result `A`, and a step with the answer.
 * `beforeAnswer` runs just before the second model call.
 */
export async function recordReadTurn(
  driver: Driver,
  beforeAnswer: () => void = () => undefined,
): Promise<void> {
  driver.prompt('what does a say?', 'm-q')
  await driver.call()
  driver.toolCall('c1')
  driver.toolResult('c1', 'A')
  driver.endStep()
  driver.startStep()
  beforeAnswer()
  await driver.call()
  driver.endStep()
  driver.endTurn()
}

/**
 * Records through `driver` one turn of `steps` steps, each a model call answered by the script (text
 * answers, no tool calls): the prompt `text` (id `id`), the request header before the first call.
 */
export async function recordTextTurn(driver: Driver, text: string, id: string, steps: number): Promise<void> {
  driver.user(text, id)
  driver.startTurn()
  for (let step = 0; step < steps; step++) {
    driver.startStep()
    if (step === 0) driver.header()
    await driver.call()
    driver.endStep()
  }
  driver.endTurn()
}

/** A script of one step calling `read` twice (`c1` on `a`, `c2` on `b`), then the answer `done`. */
export const TWO_READS_SCRIPT: readonly ScriptStep[] = [
  toolCallsResponse([
    { id: 'c1', name: 'read', args: { path: 'a' } },
    { id: 'c2', name: 'read', args: { path: 'b' } },
  ]),
  textResponse('done'),
]

/** What `run` throws (`undefined` if it returns). */
export function thrownBy(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

/**
 * Rewrites the JSONL session `file` with its run lines expanded to one event per line (format
 * version 2 allows both), for tests that address events by line; returns how many run lines it had.
 */
export function expandRunLinesIn(file: string): number {
  const [header = '', ...rest] = readFileSync(file, 'utf8').trimEnd().split('\n')
  let runs = 0
  const expanded = rest.flatMap((line) => {
    const value: unknown = JSON.parse(line)
    if (!isRunLine(value)) return [line]
    runs++
    const events = expandRunLine(value)
    if (typeof events === 'string') throw new Error(events)
    return events.map((event) => JSON.stringify(event))
  })
  writeFileSync(file, `${[header, ...expanded].join('\n')}\n`)
  return runs
}
