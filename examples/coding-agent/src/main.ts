/**
 * The coding-agent demo. One session, three turns, two processes' worth of contexts:
 *
 * 1. A Cordis context with the model runtime, JSONL sessions, the invariant checks, tools and the
 *    agent loop, plus this app's plugins (tools, session prefix, pre-step context, transcript).
 * 2. Turn 1 uses tools over several steps; the user steers mid-turn. Turn 2 is cancelled mid-stream.
 * 3. The context is disposed; a fresh one resumes the same session from disk and runs turn 3.
 * 4. The written session file is checked offline, exactly as the `dsh-invariants check` CLI does.
 */
import { rm } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from 'cordis'
import { AgentLoop, type ResumeOptions, ToolRegistry } from 'dsh-agent-loop'
import { checkSessionLog, Invariants, readRecordedLog, reconstructRequests } from 'dsh-invariants'
import { LlmRuntime, SessionId, userText } from 'dsh-llm'
import { JsonlStorage, Sessions } from 'dsh-session'
import { chooseModel, type ModelChoice } from './model.ts'
import { failureLine, lastTurnFailure } from './model-failure.ts'
import { ProjectNotes, WorkspaceContext } from './plugins.ts'
import { createSandbox, SANDBOX_FILES } from './sandbox.ts'
import { Pacing } from './scripted-model.ts'
import { SandboxTools } from './tools.ts'
import { Transcript } from './transcript.ts'
import { SimulatedUser } from './user.ts'

const DATA_DIR = resolve('.dsh-demo')
const SESSIONS_DIR = join(DATA_DIR, 'sessions')
const SANDBOX_DIR = join(DATA_DIR, 'sandbox')
const SESSION_ID = SessionId('coding-agent-demo')

const PROMPTS = {
  overview: 'Give me a short overview of the project in the sandbox.',
  steering: 'Also count the lines in src/ for me.',
  designDoc: 'Write a detailed design doc for adding division.',
  afterRestart: 'Skip the design doc. What is 12 * (7 + 5), and would multiply get it right?',
}

const SYSTEM_PROMPT =
  'You are a careful coding assistant working in a small project. Use the tools to read files and ' +
  'to do arithmetic. Answer briefly.'

/** Mounts the whole stack, then this app's plugins, on a fresh context. */
async function startApp(choice: ModelChoice, transcript: Transcript): Promise<Context> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, { storage: new JsonlStorage({ dir: SESSIONS_DIR }) })
  await app.plugin(Invariants)
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop)
  app.llm.registerAdapter(choice.provider, choice.adapter)
  // The scripted model answers instantly; slow its text to reading speed so it visibly streams.
  if (choice.scripted) await app.plugin(Pacing, { delayMs: 12 })

  await app.plugin(transcript.plugin)
  await app.plugin(SandboxTools, { root: SANDBOX_DIR })
  await app.plugin(ProjectNotes)
  await app.plugin(WorkspaceContext, { root: SANDBOX_DIR, openFile: 'src/multiply.ts' })
  await app.plugin(SimulatedUser, {
    transcript,
    steering: PROMPTS.steering,
    steerInTurn: 1,
    cancelInTurn: 2,
    cancelAfterChars: 60,
    cancelCause: 'user pressed Ctrl-C',
  })
  return app
}

function agentOptions(choice: ModelChoice): ResumeOptions {
  return { provider: choice.provider, model: choice.model, system: SYSTEM_PROMPT, maxSteps: 8 }
}

function shown(path: string): string {
  return relative(process.cwd(), path) || '.'
}

async function main(): Promise<number> {
  let choice: ModelChoice
  try {
    choice = chooseModel()
  } catch (error) {
    process.stderr.write(`dsh demo: ${error instanceof Error ? error.message : String(error)}\n`)
    return 2
  }
  const transcript = new Transcript((text) => process.stdout.write(text))
  await rm(DATA_DIR, { recursive: true, force: true })
  await createSandbox(SANDBOX_DIR)

  transcript.line('dsh coding-agent demo')
  transcript.line(choice.description)
  transcript.line(`sessions: ${shown(SESSIONS_DIR)}/ (JSONL, one file per session; cleaned at start)`)
  transcript.line(
    `sandbox:  ${shown(SANDBOX_DIR)}/ (${Object.keys(SANDBOX_FILES).length} files the tools can read)`,
  )

  // The first "process": create the session, run a tool-using turn with steering, then a cancelled one.
  const first = await startApp(choice, transcript)
  const agent = await first.agentLoop.create({ sessionId: SESSION_ID, ...agentOptions(choice) })
  agent.send(userText(PROMPTS.overview))
  await agent.whenIdle()
  // A real model that cannot be used (wrong base URL, bad key, unknown model): say so once and stop.
  const failure = choice.scripted ? undefined : lastTurnFailure(agent.session)
  if (failure !== undefined) {
    process.stderr.write(`${failureLine(failure, choice)}\n`)
    await agent.dispose()
    await first.fiber.dispose()
    return 1
  }
  agent.send(userText(PROMPTS.designDoc))
  await agent.whenIdle()
  let requestsChecked = first.invariants.counters.requestsChecked
  await agent.dispose()
  await first.fiber.dispose()

  // A fresh context: a new loop instance resumes the session from its file and runs one more turn.
  transcript.line()
  transcript.line(`── restart: a fresh context resumes ${SESSION_ID} from disk ──`)
  const second = await startApp(choice, transcript)
  const resumed = await second.agentLoop.resume(SESSION_ID, agentOptions(choice))
  resumed.send(userText(PROMPTS.afterRestart))
  await resumed.whenIdle()
  requestsChecked += second.invariants.counters.requestsChecked
  await resumed.dispose()
  await second.fiber.dispose()

  // The offline check over the written file: the same functions the CLI runs.
  const file = join(SESSIONS_DIR, `${SESSION_ID}.jsonl`)
  const log = readRecordedLog(file)
  const violations = checkSessionLog(log.events, { parent: log.header.parent ?? null })
  const requests = reconstructRequests(log.events, SESSION_ID)
  const turns = log.events.filter((event) => event.type === 'turn/end').length
  const steps = log.events.filter((event) => event.type === 'step/start').length

  transcript.line()
  transcript.line(`session file: ${shown(file)} (${log.events.length} events)`)
  transcript.line(
    `checked while running: ${requestsChecked} requests re-derived from the log before they were sent`,
  )
  transcript.line(`checked offline: ${requests.length} requests re-derived, ${violations.length} violations`)
  for (const violation of violations) {
    transcript.line(`  seq ${violation.seq ?? '-'} [${violation.check}] ${violation.message}`)
  }
  const cli = fileURLToPath(new URL('./cli.js', import.meta.resolve('dsh-invariants')))
  transcript.line(`the same check from a shell: node ${shown(cli)} check ${shown(file)}`)
  const failed = violations.length > 0 || transcript.errors > 0
  transcript.line()
  transcript.line(
    `summary: ${turns} turns, ${steps} steps, ${requests.length} requests re-derived, invariants ${failed ? 'FAILED' : 'clean'}`,
  )
  return failed ? 1 : 0
}

process.exitCode = await main()
