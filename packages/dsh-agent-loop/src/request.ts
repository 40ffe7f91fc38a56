/**
 * Request building: render the header (system prompt, tools, call config, session prefix), record
 * it when owed, and build the request from the log. `buildLoopRequest` is the loop's only way to a
 * model request.
 */
import {
  deepFreeze,
  type EventBus,
  type LlmCallConfig,
  type LlmRequest,
  type Message,
  markLoopRequest,
} from 'dsh-llm'
import { canonicalHeader, composeRequest, headersEqual, type RequestHeader, type Session } from 'dsh-session'
import { awaitListeners, listenerFailed } from './hooks.ts'
import type { ToolRegistry } from './tools.ts'
import type { AgentOptions, TurnPosition } from './types.ts'

/** What rendering a header needs from the agent. */
export interface HeaderSource {
  readonly bus: EventBus
  readonly tools: ToolRegistry
  readonly options: AgentOptions
  /** The instance's composed session prefix (empty when absent). */
  readonly prefix: readonly Message[]
}

/** The frozen call config seed built from the agent's options. */
export function configSeed(options: AgentOptions): LlmCallConfig {
  return pickConfig(options)
}

function pickConfig(source: LlmCallConfig): LlmCallConfig {
  const config: { -readonly [K in keyof LlmCallConfig]: LlmCallConfig[K] } = {
    provider: source.provider,
    model: source.model,
  }
  if (source.temperature !== undefined) config.temperature = source.temperature
  if (source.maxTokens !== undefined) config.maxTokens = source.maxTokens
  if (source.reasoningEffort !== undefined) config.reasoningEffort = source.reasoningEffort
  if (source.stop !== undefined) config.stop = [...source.stop]
  return deepFreeze(config)
}

function isConfig(value: unknown): value is LlmCallConfig {
  if (value === null || typeof value !== 'object') return false
  const { provider, model } = value as { provider?: unknown; model?: unknown }
  return typeof provider === 'string' && provider !== '' && typeof model === 'string' && model !== ''
}

/**
 * Renders the header of the next model call: `agent/system-prompt` (innermost: the configured
 * system prompt), the offered tools' schemas, `agent/request` (frozen seed in, config out; only the
 * `LlmCallConfig` fields are kept) and the prefix. Returns it canonical and frozen. Rejects with
 * `LISTENER_FAILED` for a throwing listener or an invalid result, or with the abort error.
 */
export async function renderHeader(source: HeaderSource, position: TurnPosition): Promise<RequestHeader> {
  const { bus, options } = source
  const base = options.system
  const system: unknown = await awaitListeners('agent/system-prompt', position.agent, position.signal, () =>
    bus.waterfall('agent/system-prompt', { ...position, base }, async () => base),
  )
  if (system !== undefined && typeof system !== 'string') {
    throw listenerFailed(
      'agent/system-prompt',
      position.agent,
      `returned ${JSON.stringify(system)}, not a string`,
    )
  }
  const seed = configSeed(options)
  const config: unknown = await awaitListeners('agent/request', position.agent, position.signal, () =>
    bus.waterfall('agent/request', { ...position, config: seed }, async () => seed),
  )
  if (!isConfig(config)) {
    throw listenerFailed(
      'agent/request',
      position.agent,
      `returned ${JSON.stringify(config)}, not a call config`,
    )
  }
  const tools = source.tools.select(options.tools).map((tool) => tool.schema)
  const header: { -readonly [K in keyof RequestHeader]: RequestHeader[K] } = { config: pickConfig(config) }
  if (system !== undefined) header.system = system
  if (tools.length > 0) header.tools = tools
  if (source.prefix.length > 0) header.messagePrefix = source.prefix
  return canonicalHeader(header)
}

/**
 * Appends a `request/header` snapshot when one is owed: always for the first request of a loop
 * instance (`initial` on a log without a header, else `resume`), later only when `header` differs
 * from the latest snapshot (`change`).
 */
export function recordHeader(session: Session, header: RequestHeader, firstOfInstance: boolean): void {
  const latest = session.requestHeader()
  if (firstOfInstance) {
    session.append('request/header', { header, reason: latest === undefined ? 'initial' : 'resume' })
  } else if (latest === undefined || !headersEqual(latest.header, header)) {
    session.append('request/header', { header, reason: 'change' })
  }
}

/**
 * Builds the request from the log as it stands: `composeRequest(latest header, deriveMessages())`,
 * marked with the session and the log length it saw. Call it right after the durability barrier.
 * Throws `TypeError` when the log has no header yet (the loop always records one first).
 */
export function buildLoopRequest(session: Session, signal: AbortSignal): LlmRequest {
  const state = session.requestHeader()
  if (state === undefined)
    throw new TypeError(`session ${session.id} has no request/header to build a request from`)
  const request = composeRequest(state.header, session.deriveMessages(), { sessionId: session.id, signal })
  markLoopRequest(request, { sessionId: session.id, logLength: session.seq })
  return request
}
