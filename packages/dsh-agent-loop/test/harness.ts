/** Test harness: a cordis app with the whole stack mounted, a scripted model and log helpers. */
import { Context } from 'cordis'
import AgentLoop, { type Agent, type AgentLoopConfig, type AgentOptions, ToolRegistry } from 'dsh-agent-loop'
import type { InvariantsConfig } from 'dsh-invariants'
import { installInvariantGuard, mountInvariants } from 'dsh-invariants/vitest'
import {
  type HarnessError,
  LlmRuntime,
  type Message,
  messageText,
  type ToolResultMessage,
  type UserMessage,
  userText,
} from 'dsh-llm'
import { type ScriptedAdapter, type ScriptStep, scriptedAdapter } from 'dsh-llm/testing'
import { type Session, type SessionStorage, Sessions } from 'dsh-session'
import { type ZodType, z } from 'zod'

installInvariantGuard()

export interface Harness {
  readonly app: Context
  readonly model: ScriptedAdapter
  /** Every `agent/error` reported, in order. */
  readonly errors: HarnessError[]
  /**
   * Live notifications in order: `status:<s>`, `inserted:<text>`, `discarded:<text>`,
   * `claimed:<text>@<turn>`, `created`, `disposed`.
   */
  readonly notes: string[]
  /** Creates an agent on provider `test`, model `m`. */
  create(options?: Partial<AgentOptions>): Promise<Agent>
  /**
   * Creates an agent like `create`, sends it `prompt` (a string is sent as a user text) and resolves
   * with the agent once it is idle again.
   */
  run(prompt: string | UserMessage, options?: Partial<AgentOptions>): Promise<Agent>
}

export interface HarnessOptions {
  readonly config?: AgentLoopConfig
  readonly storage?: SessionStorage
  /** Which invariant checks to mount (default: all). */
  readonly invariants?: InvariantsConfig
}

/**
 * Mounts LlmRuntime, Sessions, every invariant check, ToolRegistry and AgentLoop, and registers
 * `script` as provider `test`. A test fails if any invariant is violated during it.
 */
export async function createHarness(
  script: readonly ScriptStep[] = [],
  options: HarnessOptions = {},
): Promise<Harness> {
  const app = new Context()
  await app.plugin(LlmRuntime)
  await app.plugin(Sessions, options.storage === undefined ? {} : { storage: options.storage })
  await mountInvariants(app, options.invariants ?? {})
  await app.plugin(ToolRegistry)
  await app.plugin(AgentLoop, options.config ?? {})
  const model = scriptedAdapter(script)
  app.llm.registerAdapter('test', model)
  const errors: HarnessError[] = []
  app.on('agent/error', (_agent, error) => {
    errors.push(error)
  })
  const notes: string[] = []
  app.on('agent/status', (_agent, status) => notes.push(`status:${status}`))
  app.on('agent/inbox/inserted', (_agent, { message }) => notes.push(`inserted:${messageText(message)}`))
  app.on('agent/inbox/discarded', (_agent, { message }) => notes.push(`discarded:${messageText(message)}`))
  app.on('agent/inbox/claimed', (_agent, { message, turn }) =>
    notes.push(`claimed:${messageText(message)}@${turn}`),
  )
  app.on('agent/created', () => notes.push('created'))
  app.on('agent/disposed', () => notes.push('disposed'))
  const create = (overrides: Partial<AgentOptions> = {}) =>
    app.agentLoop.create({ provider: 'test', model: 'm', ...overrides })
  return {
    app,
    model,
    errors,
    notes,
    create,
    run: async (prompt, overrides) => {
      const agent = await create(overrides)
      agent.send(typeof prompt === 'string' ? userText(prompt) : prompt)
      await agent.whenIdle()
      return agent
    },
  }
}

/** The event types of the log, in order. */
export function types(session: Session, from = 0): string[] {
  return session.events.slice(from).map((event) => event.type)
}

/** The event types with `assistant/chunk` runs collapsed to one `assistant/chunk…` entry. */
export function outline(session: Session, from = 0): string[] {
  const out: string[] = []
  for (const type of types(session, from)) {
    if (type === 'assistant/chunk' && out[out.length - 1] === 'assistant/chunk…') continue
    out.push(type === 'assistant/chunk' ? 'assistant/chunk…' : type)
  }
  return out
}

/** The data of every event of `type`. */
export function dataOf<T = unknown>(session: Session, type: string): T[] {
  return session.events.filter((event) => event.type === type).map((event) => event.data as T)
}

/** One logged `tool/result`, flattened for assertions. */
export interface ToolResultRow {
  /** The call it answers. */
  readonly id: string
  /** Its text parts joined; a non-text part stands as its type. */
  readonly text: string
  /** Whether the result block is marked as an error. */
  readonly isError: boolean
  /** The code of the event's `error`, if it has one. */
  readonly code: string | undefined
}

/** Every `tool/result` of `session`, in log order. */
export function toolResults(session: Session): ToolResultRow[] {
  const data = dataOf<{ message: ToolResultMessage; error?: { code: string } }>(session, 'tool/result')
  return data.map(({ message, error }) => {
    const block = message.content[0]
    const text = block.content.map((part) => (part.type === 'text' ? part.text : part.type)).join('')
    return { id: block.toolCallId, text, isError: block.isError === true, code: error?.code }
  })
}

/** The text of each message of a request, for compact assertions (`call:name`, `result:callId`). */
export function texts(messages: readonly Message[]): string[] {
  return messages.map((message) =>
    message.content
      .map((block) => {
        switch (block.type) {
          case 'text':
            return block.text
          case 'tool-call':
            return `call:${block.name}`
          case 'tool-result':
            return `result:${block.toolCallId}`
          default:
            return block.type
        }
      })
      .join('|'),
  )
}

/**
 * Resolves when `session` commits an event for which `match` is true (checked on new events only;
 * chunk entries, which come on `session/chunk`, built).
 */
export function whenLogged(
  app: Context,
  session: Session,
  match: (event: Session['events'][number]) => boolean,
): Promise<Session['events'][number]> {
  return new Promise((resolve) => {
    const seen = (target: Session, event: Session['events'][number]) => {
      if (target.id === session.id && match(event)) {
        disposeEvents()
        disposeChunks()
        resolve(event)
      }
    }
    const disposeEvents = app.on('session/event', seen)
    const disposeChunks = app.on('session/chunk', (target, seq) => {
      const event = target.eventAt(seq)
      if (event !== undefined) seen(target, event)
    })
  })
}

/** A promise with its resolver, for gating tools and listeners from a test. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open: (value: T) => void = () => undefined
  const promise = new Promise<T>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/** The reason of the last `turn/end` of `session`. */
export function lastTurnEnd(session: Session): unknown {
  const ends = dataOf<{ reason: unknown }>(session, 'turn/end')
  return ends.at(-1)?.reason
}

/**
 * Registers tool `name` (no parameters) whose body opens `running` when it starts, then waits for
 * `release()` before answering `waited`: a test steers, injects or cancels while the tool runs.
 */
export function gatedTool(
  h: Harness,
  name = 'wait',
  description = 'waits',
): { running: Promise<void>; release: () => void } {
  const running = gate()
  const release = gate()
  h.app.tools.register({
    name,
    description,
    parameters: z.object({}),
    execute: async () => {
      running.open()
      await release.promise
      return 'waited'
    },
  })
  return { running: running.promise, release: () => release.open() }
}

/** What `probeTool` registers: a name, a description, a schema (default: no parameters) and the answer. */
export interface ProbeToolOptions {
  readonly name: string
  readonly description: string
  readonly parameters?: ZodType<Record<string, unknown>>
  readonly answer: string
}

/** Registers a tool answering `answer`; `ran` says whether its body was ever entered. */
export function probeTool(h: Harness, options: ProbeToolOptions): { readonly ran: boolean } {
  const probe = { ran: false }
  h.app.tools.register({
    name: options.name,
    description: options.description,
    parameters: options.parameters ?? z.object({}),
    execute: () => {
      probe.ran = true
      return options.answer
    },
  })
  return probe
}

/** Registers tool `echo` (`{ text: string }`), whose answer is `answer(text)` (default: the text). */
export function echoTool(h: Harness, answer: (text: string) => string = (text) => text): void {
  h.app.tools.register({
    name: 'echo',
    description: 'echoes',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => answer(text),
  })
}
