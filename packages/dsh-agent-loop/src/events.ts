/**
 * The agent loop's cordis events. Each declaration's JSDoc says its dispatch mode: `waterfall`
 * listeners get `(input, next)` and return the result (first registered is outermost; a listener
 * wrapping `next()` keeps downstream changes unless it replaces them), `serial` listeners are
 * awaited in registration order, `emit` notifications are contained (a throwing listener is logged
 * and the others still run).
 */
import type { HarnessError, LlmCallConfig, Message, UserMessage } from 'dsh-llm'
import type {
  Agent,
  AgentStatus,
  AgentWarning,
  Awaitable,
  PreStepDecision,
  PreStepInput,
  RequestConfigInput,
  RequestErrorDecision,
  RequestErrorInput,
  SessionPrefixInput,
  SystemPromptInput,
  ToolPostExecuteInput,
  ToolPostExecuteResult,
  ToolPreExecuteDecision,
  ToolPreExecuteInput,
  TurnStoppingInput,
} from './types.ts'

declare module 'dsh-llm' {
  interface TurnEndReasonMap {
    /** The turn reached the agent's `maxSteps` while it still had work for another step. */
    'max-steps': { readonly kind: 'max-steps'; readonly limit: number }
  }
}

declare module 'cordis' {
  interface Events {
    /**
     * Waterfall, once per loop instance before its first pre-step: composes the session prefix.
     * Contribute with `[mine, ...(await next())]` (registration order). The innermost result is `[]`.
     */
    'agent/session-prefix'(
      input: SessionPrefixInput,
      next: () => Promise<readonly Message[]>,
    ): Promise<readonly Message[]>
    /**
     * Waterfall, exactly once per proposed step: decides whether the claimed batch enters (possibly
     * rewritten) or the turn ends `blocked`. The innermost decision enters `input.messages` as claimed.
     */
    'agent/pre-step'(input: PreStepInput, next: () => Promise<PreStepDecision>): Promise<PreStepDecision>
    /** Waterfall before each model call: renders the system prompt. The innermost result is `input.base`. */
    'agent/system-prompt'(
      input: SystemPromptInput,
      next: () => Promise<string | undefined>,
    ): Promise<string | undefined>
    /** Waterfall before each model call: the call config (frozen seed in, config out). */
    'agent/request'(input: RequestConfigInput, next: () => Promise<LlmCallConfig>): Promise<LlmCallConfig>
    /**
     * Waterfall after a failed model call: retry inside the same step, or fail the turn. The
     * innermost decision follows the agent's retry policy.
     */
    'agent/request-error'(
      input: RequestErrorInput,
      next: () => Promise<RequestErrorDecision>,
    ): Promise<RequestErrorDecision>
    /** Waterfall before each tool body: allow or deny. The innermost decision is `allow`. */
    'tools/pre-execute'(
      input: ToolPreExecuteInput,
      next: () => Promise<ToolPreExecuteDecision>,
    ): Promise<ToolPreExecuteDecision>
    /**
     * Waterfall after each tool body: may rewrite the output and return `additionalContexts`, which
     * are appended after the step's tool results. The innermost result is the output unchanged.
     */
    'tools/post-execute'(
      input: ToolPostExecuteInput,
      next: () => Promise<ToolPostExecuteResult>,
    ): Promise<ToolPostExecuteResult>
    /**
     * Serial, when a turn would end `completed`: a listener may `input.agent.steer(...)` to run
     * another step instead.
     */
    'agent/turn-stopping'(input: TurnStoppingInput): Awaitable<void>
    /** Emit (contained): the agent's status changed. */
    'agent/status'(agent: Agent, status: AgentStatus): void
    /** Emit (contained): something failed that the log records only as a turn end (or not at all). */
    'agent/error'(agent: Agent, error: HarnessError): void
    /** Emit (contained): the loop repaired something instead of failing (bad usage numbers, ...). */
    'agent/warning'(agent: Agent, warning: AgentWarning): void
    /** Emit (contained): an agent was created (or resumed). */
    'agent/created'(agent: Agent): void
    /** Emit (contained): an agent finished disposing; its session is released. */
    'agent/disposed'(agent: Agent): void
    /** Emit (contained): a message entered the inbox. */
    'agent/inbox/inserted'(agent: Agent, event: { readonly message: UserMessage }): void
    /** Emit (contained): a pending message was removed without being claimed. */
    'agent/inbox/discarded'(agent: Agent, event: { readonly message: UserMessage }): void
    /** Emit (contained): the loop claimed a pending message for turn `turn`. */
    'agent/inbox/claimed'(agent: Agent, event: { readonly message: UserMessage; readonly turn: number }): void
  }
}
