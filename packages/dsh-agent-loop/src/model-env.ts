/** An agent's model-call state: what `callModel`, its header and its retries read and keep per agent. */
import type { EventBus, LlmRuntime, Message, RetryPolicy } from 'dsh-llm'
import type { Session } from 'dsh-session'
import { CallIdLedger } from './call-id-ledger.ts'
import type { HeaderMemo } from './model/header.ts'
import type { ModelCallEnv } from './model/model-call.ts'
import type { ToolRegistry } from './tools/registry.ts'
import type { PrefixHolder } from './turn/prefix.ts'
import type { Agent, AgentOptions, AgentWarning } from './types.ts'

const EMPTY_PREFIX: readonly Message[] = Object.freeze([])

/**
 * One agent's `ModelCallEnv`: a class, so `warn` is a method on the prototype rather than a closure
 * (and a context) kept by every agent.
 */
export class LoopModelEnv implements ModelCallEnv, PrefixHolder {
  prefix: readonly Message[] = EMPTY_PREFIX
  prefixComposed = false
  firstRequest = true
  headerMemo: HeaderMemo | undefined = undefined
  /** Typed as the ledger: the driver settles it between turns. */
  callIds: CallIdLedger

  constructor(
    private readonly agent: Agent,
    readonly session: Session,
    readonly options: AgentOptions,
    readonly bus: EventBus,
    readonly llm: LlmRuntime,
    readonly tools: ToolRegistry,
    readonly policy: RetryPolicy,
  ) {
    this.callIds = new CallIdLedger(session)
  }

  /** Reports something the loop repaired instead of failing (`agent/warning`). */
  warn(warning: AgentWarning): void {
    this.bus.emit('agent/warning', [this.agent, warning])
  }
}
