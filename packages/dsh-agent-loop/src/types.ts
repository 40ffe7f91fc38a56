/**
 * Types of the agent loop: the agent's public face, its options, the payloads and decisions of the
 * extension points, and tool definitions. Types only; runtime code lives beside each concept.
 */
import type {
  ContentBlock,
  JsonSchema,
  LlmCallConfig,
  LlmFailure,
  Message,
  RetryOptions,
  SessionId,
  ToolCallBlock,
  UserMessage,
} from 'dsh-llm'
import type { InboxTarget, Session } from 'dsh-session'
import type { Inbox } from './inbox/inbox.ts'
import type { ToolArgs, ToolParameters } from './tools/schema.ts'
import type { TurnResult } from './turn/result.ts'
import type { TurnStream } from './turn/stream.ts'

/** Closed: what an agent is doing. `running` from the moment a turn opens until the queue is empty. */
export type AgentStatus = 'idle' | 'running'

/** How a message is delivered by `Agent.send`. */
export interface SendOptions {
  /** Which inbox list it waits in. Default `'next-turn'`. */
  readonly target?: InboxTarget
  /** Whether the send starts a turn when the agent is idle. Default `true`. */
  readonly wakeup?: boolean
}

/** Options of `Agent.cancel`. */
export interface CancelOptions {
  /** Keep pending inbox messages instead of discarding them. Default `false`. */
  readonly keepInbox?: boolean
}

/**
 * One agent: a loop instance over one session. Every method is safe to call at any time; input
 * after `dispose()` throws `AgentLoopError` `AGENT_DISPOSED`.
 */
export interface Agent {
  /** Unique per loop instance (not per session: a resumed agent gets a new id). */
  readonly id: string
  /** The session this agent appends to. */
  readonly session: Session
  /** The durable inbox of pending work (readable and editable; only the loop claims). */
  readonly inbox: Inbox
  /** `running` while a turn is open or queued work is being worked through, else `idle`. */
  readonly status: AgentStatus
  /** True once `dispose()` was called. */
  readonly disposed: boolean
  /**
   * Queues `message` in the inbox (`target`, default next-turn). A waking send (the default) while
   * idle opens a turn before returning: the insert, `turn/start` and the claim are in the log when
   * `send` returns. A waking send while a cancelled turn is closing runs after it has closed.
   * Throws `INVALID_INBOX_MUTATION` if the message id is already pending.
   */
  send(message: UserMessage, options?: SendOptions): void
  /**
   * The one-call API: sends `input` (a string becomes a user text message) as a waking next-turn
   * message and resolves with the result of the turn that claims it (`text`, `message`, `usage`,
   * `stopReason`, `steps`), once that turn has ended `completed` or `max-tokens`. Rejects with a
   * `TurnError`: `TURN_FAILED` (ended `error`; `cause` is the provider or loop error),
   * `TURN_CANCELLED` (cancelled, or discarded from the inbox before its turn), `TURN_BLOCKED`,
   * `STEP_LIMIT`; with `AGENT_DISPOSED` after or during `dispose()`. Errors of a prompted turn reach
   * the caller this way even with no `agent/error` listener.
   */
  prompt(input: string | UserMessage): Promise<TurnResult>
  /**
   * Like `prompt`, but also yields the turn's session events as they are committed, from its
   * `turn/start` to its `turn/end`; iteration then throws the `TurnError` if the turn did not
   * complete. `result` settles like `prompt`.
   */
  stream(input: string | UserMessage): TurnStream
  /** `send(message, {target: 'next-step', wakeup: true})`: enters the next step of the running turn. */
  steer(message: UserMessage): void
  /**
   * Adds context, not work. While a turn is open the message waits in the loop's outbox and becomes a
   * `user/message` at the next safe boundary; while no turn is open it is appended at once, opens no
   * turn and runs no model (`whenIdle()` and `dispose()` wait for its flush).
   */
  inject(message: UserMessage): void
  /**
   * Cancels the running turn with `cause` (default `'cancelled'`): the turn ends `aborted {cause}`.
   * The first cause of a turn wins. Pending inbox messages are discarded durably unless `keepInbox`.
   * A no-op while idle.
   */
  cancel(cause?: string, options?: CancelOptions): void
  /**
   * Resolves when the agent is idle and every idle `inject` is durable. Never rejects, also when a
   * turn failed or was cancelled: the outcome is the turn's `turn/end` reason in the log, and a
   * failure is reported on `agent/error` (on stderr when nobody listens). Use `prompt` to get the
   * outcome as a result or a rejection.
   */
  whenIdle(): Promise<void>
  /** Cancels (cause `'disposed'`), waits for quiescence, flushes and releases the session. Idempotent. */
  dispose(): Promise<void>
}

/**
 * Options of `ctx.agentLoop.create` (and, without the session fields, of `resume`): the call config
 * (`provider`, `model`, `temperature`, `maxTokens`, `reasoningEffort`, `stop`) plus the agent's own.
 */
export interface AgentOptions extends LlmCallConfig {
  /** A live session to drive. The caller keeps ownership: `dispose` flushes it but does not close it. */
  readonly session?: Session
  /** The id of a new session to create (default: a fresh id). The agent closes it on `dispose`. */
  readonly sessionId?: SessionId
  /** The base system prompt, before `agent/system-prompt` listeners. */
  readonly system?: string
  /** Names of the registered tools to offer, in this order. Default: every registered tool. */
  readonly tools?: readonly string[]
  /**
   * The most steps one turn may take: an integer >= 1, or `Infinity` for no limit. Default 50
   * (`DEFAULT_MAX_STEPS`). A turn that would take another step ends `max-steps {limit}`.
   */
  readonly maxSteps?: number
  /** The default retry policy for provider failures (see `agent/request-error`). */
  readonly retry?: RetryOptions
}

/** Options of `ctx.agentLoop.resume`: everything but the session fields. */
export type ResumeOptions = Omit<AgentOptions, 'session' | 'sessionId'>

/** Configuration of the AgentLoop plugin. */
export interface AgentLoopConfig {
  /** How many parallel-safe tool calls of one step may run at once (an integer >= 1). Default 8. */
  readonly maxToolConcurrency?: number
  /**
   * How long a tool body may run, ms, for tools without their own `timeoutMs` (a number > 0;
   * `Infinity` for no limit). Default 300,000 (five minutes). A body still running then gets the
   * error result `TOOL_TIMEOUT`, its signal aborts, and whatever it returns later is dropped.
   */
  readonly toolTimeoutMs?: number
  /**
   * After `cancel()` or `dispose()`, how long a started tool body (and its `tools/post-execute`
   * listeners) may take to stop, ms (a number >= 0). Default 2,000. A body still running then is
   * abandoned with the error result `TOOL_CANCELLED`; its late result is dropped, never logged.
   */
  readonly abortGraceMs?: number
}

/** Where a turn stands when an extension point runs. */
export interface TurnPosition {
  readonly agent: Agent
  readonly turn: number
  readonly step: number
  /** Aborted when the turn is cancelled; listeners doing slow work should honour it. */
  readonly signal: AbortSignal
}

/** Input of `agent/session-prefix`. */
export interface SessionPrefixInput {
  readonly agent: Agent
  readonly signal: AbortSignal
}

/** Input of `agent/pre-step`: the claimed batch proposed for step `step`. */
export interface PreStepInput extends TurnPosition {
  readonly messages: readonly UserMessage[]
  /** The loop instance's composed session prefix (empty when absent). */
  readonly sessionPrefix: readonly Message[]
}

/** Closed: the one decision taken before each proposed step. */
export type PreStepDecision =
  | { readonly kind: 'reject' }
  | { readonly kind: 'enter'; readonly messages: readonly UserMessage[] }

/** Input of `agent/system-prompt`: `base` is the agent's configured system prompt. */
export interface SystemPromptInput extends TurnPosition {
  readonly base: string | undefined
}

/** Input of `agent/request`: the frozen call config seed built from the agent's options. */
export interface RequestConfigInput extends TurnPosition {
  readonly config: LlmCallConfig
}

/** Input of `agent/request-error`: attempt `attempt` (1-based) of this step's model call failed. */
export interface RequestErrorInput extends TurnPosition {
  readonly failure: LlmFailure
  readonly attempt: number
}

/** Closed: whether to call the model again inside the same step. */
export type RequestErrorDecision =
  | { readonly kind: 'retry'; readonly delayMs: number }
  | { readonly kind: 'fail' }

/** Input of `agent/turn-stopping`: the turn is about to end `completed` after step `step`. */
export type TurnStoppingInput = TurnPosition

/** What a tool reports about itself to listeners. */
export interface ToolInfo {
  readonly name: string
  readonly description: string
  readonly mode: ToolMode
}

/** Input of `tools/pre-execute`: a call whose arguments parsed and validated. */
export interface ToolPreExecuteInput extends TurnPosition {
  readonly call: ToolCallBlock
  readonly tool: ToolInfo
  /** The validated arguments (the schema's output). */
  readonly args: unknown
}

/** Closed: whether a tool call may run. A denied call gets an error result carrying `reason`. */
export type ToolPreExecuteDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string }

/** A tool's result as the model will see it. */
export interface ToolOutput {
  readonly content: readonly ContentBlock[]
  readonly isError: boolean
}

/** Input of `tools/post-execute`: the body ran (or threw) and produced `output`. */
export interface ToolPostExecuteInput extends TurnPosition {
  readonly call: ToolCallBlock
  readonly tool: ToolInfo
  readonly args: unknown
  readonly output: ToolOutput
}

/** Result of `tools/post-execute`: the (possibly rewritten) output, plus context for the outbox. */
export interface ToolPostExecuteResult extends ToolOutput {
  /** Messages appended after this step's tool results, each as its own `user/message`. */
  readonly additionalContexts?: readonly UserMessage[]
}

/** Closed: `parallel` tools run concurrently up to the cap; an `exclusive` tool runs alone. */
export type ToolMode = 'parallel' | 'exclusive'

/** What a tool body receives besides its arguments. */
export interface ToolExecuteContext {
  /**
   * Aborted when the turn is cancelled (the body then has `abortGraceMs` to stop) or when the
   * call's timeout fires.
   */
  readonly signal: AbortSignal
  readonly callId: ToolCallBlock['id']
  readonly agent: Agent
}

/**
 * What a tool body returns: text, content blocks, or a full result. `isError` marks a failure the
 * model should see; `concludeTurn` ends the turn (`completed`) after this step's tool batch.
 */
export type ToolReturn =
  | string
  | readonly ContentBlock[]
  | {
      readonly content: string | readonly ContentBlock[]
      readonly isError?: boolean
      readonly concludeTurn?: boolean
    }

/** A tool as registered with `ctx.tools.register`. */
export interface ToolDefinition<S extends ToolParameters = ToolParameters> {
  /** 1–64 characters of `[A-Za-z0-9_-]`; unique among registered tools. */
  readonly name: string
  readonly description: string
  /**
   * The arguments' schema, enforced before `execute`: a Standard Schema validator (zod 3.24+, zod 4,
   * valibot, arktype, ...) or a plain JSON Schema object (validated with Ajv; `execute` then gets a
   * `Record<string, unknown>`).
   */
  readonly parameters: S
  /**
   * The JSON Schema offered to the model for a Standard Schema `parameters` whose library cannot
   * produce one itself (zod 3, valibot: use their JSON Schema converters). Derived from
   * `parameters` when left out (zod 4, arktype). Not allowed beside a plain JSON Schema.
   */
  readonly jsonSchema?: JsonSchema
  /** Default `'parallel'`. */
  readonly mode?: ToolMode
  /**
   * How long the body may run, ms (a number > 0, `Infinity` for no limit). Default: the plugin's
   * `toolTimeoutMs`. Past it the call's result is `TOOL_TIMEOUT` and its signal aborts.
   */
  readonly timeoutMs?: number
  /** The body. It runs only with valid arguments; what it throws becomes an error result. */
  execute(args: ToolArgs<S>, context: ToolExecuteContext): ToolReturn | Promise<ToolReturn>
}

/** Something the loop repaired instead of failing, reported on `agent/warning`. */
export interface AgentWarning {
  /** Stable: route on it (`INVALID_USAGE`, ...). */
  readonly code: string
  /** Names the turn and step and says what was repaired. */
  readonly message: string
}

/** A value or a promise of it. */
export type Awaitable<T> = T | Promise<T>
