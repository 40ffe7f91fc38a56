/**
 * The request header: render it (system prompt, tools, call config, session prefix) and record a
 * `request/header` snapshot when one is owed.
 */
import { deepFreeze, type EventBus, type LlmCallConfig, type Message, wellFormed } from 'dsh-llm'
import { canonicalHeader, headersEqual, type RequestHeader, type Session } from 'dsh-session'
import { describeError } from '../errors.ts'
import { awaitListeners, listenerFailed } from '../hooks.ts'
import { throwIfAborted } from '../timing/cancel.ts'
import type { ToolRegistry } from '../tools/registry.ts'
import type { AgentOptions, TurnPosition } from '../types.ts'
import { checkCallOptions } from './call-options.ts'

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
  if (source.cachePolicy !== undefined) config.cachePolicy = { ...source.cachePolicy }
  return deepFreeze(config)
}

/**
 * `config` with its cache policy's `prefixMessages` set to the session prefix's length (issue 32):
 * the adapter then knows where the stable prefix ends. Without a cache policy, `config` itself.
 */
function withPrefixCount(config: LlmCallConfig, prefixLength: number): LlmCallConfig {
  const policy = config.cachePolicy
  if (policy === undefined || policy.prefixMessages === prefixLength) return config
  return deepFreeze({ ...config, cachePolicy: { ...policy, prefixMessages: prefixLength } })
}

function sameCachePolicy(a: LlmCallConfig['cachePolicy'], b: LlmCallConfig['cachePolicy']): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined) return false
  return a.breakpoints === b.breakpoints && a.ttl === b.ttl && a.prefixMessages === b.prefixMessages
}

function isConfig(value: unknown): value is LlmCallConfig {
  if (value === null || typeof value !== 'object') return false
  const { provider, model } = value as { provider?: unknown; model?: unknown }
  return typeof provider === 'string' && provider !== '' && typeof model === 'string' && model !== ''
}

/** The part of a header source that rendering reads from the options and the registry. */
interface RenderInputs {
  readonly toolsVersion: number
  readonly toolNames: readonly string[] | undefined
  readonly seed: LlmCallConfig
  readonly system: string | undefined
  readonly prefix: readonly Message[]
}

/**
 * What the last quiet render (no `agent/system-prompt` or `agent/request` listener) was made of,
 * and the seq of the `request/header` snapshot it recorded or matched. While every part still
 * holds, rendering again would give an equal header and record nothing.
 */
export interface HeaderMemo extends RenderInputs {
  readonly latestSeq: number
}

/** A header source that remembers its last quiet render across steps. */
export interface HeaderEnv extends HeaderSource {
  readonly session: Session
  headerMemo: HeaderMemo | undefined
}

function sameNames(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined || a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

function sameSeed(options: AgentOptions, seed: LlmCallConfig): boolean {
  return (
    options.provider === seed.provider &&
    options.model === seed.model &&
    options.temperature === seed.temperature &&
    options.maxTokens === seed.maxTokens &&
    options.reasoningEffort === seed.reasoningEffort &&
    sameNames(options.stop, seed.stop) &&
    sameCachePolicy(options.cachePolicy, seed.cachePolicy)
  )
}

/** True when `memo` still describes what a render for `env` would produce and the log's latest header. */
function memoHolds(env: HeaderEnv, memo: HeaderMemo): boolean {
  const { bus, options } = env
  return (
    !bus.has('agent/system-prompt') &&
    !bus.has('agent/request') &&
    env.session.requestHeader()?.seq === memo.latestSeq &&
    env.tools.version === memo.toolsVersion &&
    env.prefix === memo.prefix &&
    options.system === memo.system &&
    sameNames(options.tools, memo.toolNames) &&
    sameSeed(options, memo.seed)
  )
}

/**
 * Renders the next call's header and appends a `request/header` snapshot when one is owed
 * (`renderHeader` then `recordHeader`). After a quiet render it skips both, with no await, while
 * nothing the header is made of can have changed: still no listener of either extension point, the
 * same registry version, tool names, call options, system prompt and prefix, and the same latest
 * snapshot in the log; it then returns `undefined` instead of a promise. Throws or rejects like
 * `renderHeader` (the abort error also on the skip path).
 */
export function prepareHeader(
  env: HeaderEnv,
  position: TurnPosition,
  firstOfInstance: boolean,
): Promise<void> | undefined {
  const memo = env.headerMemo
  if (!firstOfInstance && memo !== undefined && memoHolds(env, memo)) {
    throwIfAborted(position.signal)
    return undefined
  }
  return renderAndRecord(env, position, firstOfInstance)
}

async function renderAndRecord(
  env: HeaderEnv,
  position: TurnPosition,
  firstOfInstance: boolean,
): Promise<void> {
  env.headerMemo = undefined
  const { header, quiet } = await render(env, position)
  recordHeader(env.session, header, firstOfInstance)
  const latest = env.session.requestHeader()
  if (quiet !== undefined && latest !== undefined) env.headerMemo = { ...quiet, latestSeq: latest.seq }
}

/**
 * Renders the header of the next model call: `agent/system-prompt` (innermost: the configured
 * system prompt), the offered tools' schemas, `agent/request` (frozen seed in, config out; only the
 * `LlmCallConfig` fields are kept) and the prefix. Returns it canonical and frozen. Rejects with
 * `LISTENER_FAILED` for a throwing listener or an invalid result, or with the abort error.
 */
export async function renderHeader(source: HeaderSource, position: TurnPosition): Promise<RequestHeader> {
  return (await render(source, position)).header
}

/** `renderHeader`, plus its inputs when no listener took part (`quiet`). */
async function render(
  source: HeaderSource,
  position: TurnPosition,
): Promise<{ header: RequestHeader; quiet: RenderInputs | undefined }> {
  const { bus, options } = source
  const { agent, signal } = position
  const base = options.system
  const toolsVersion = source.tools.version
  let listened = false
  let system: unknown = base
  if (bus.has('agent/system-prompt')) {
    listened = true
    system = await awaitListeners('agent/system-prompt', agent, signal, () =>
      bus.waterfall('agent/system-prompt', { ...position, base }, async () => base),
    )
  } else {
    throwIfAborted(signal)
  }
  if (system !== undefined && typeof system !== 'string') {
    throw listenerFailed('agent/system-prompt', agent, `returned ${JSON.stringify(system)}, not a string`)
  }
  // What enters the header is well-formed text: a lone surrogate becomes U+FFFD.
  const systemText = system === undefined ? undefined : wellFormed(system)
  const seed = configSeed(options)
  let config: unknown = seed
  if (bus.has('agent/request')) {
    listened = true
    config = await awaitListeners('agent/request', agent, signal, () =>
      bus.waterfall('agent/request', { ...position, config: seed }, async () => seed),
    )
  } else {
    throwIfAborted(signal)
  }
  if (!isConfig(config)) {
    throw listenerFailed('agent/request', agent, `returned ${JSON.stringify(config)}, not a call config`)
  }
  if (config !== seed) {
    try {
      checkCallOptions('agent/request', config)
    } catch (error) {
      throw listenerFailed('agent/request', agent, `returned a bad call config: ${describeError(error)}`)
    }
  }
  const toolNames = options.tools === undefined ? undefined : Object.freeze([...options.tools])
  const tools = source.tools.select(toolNames).map((tool) => tool.schema)
  const prefix = source.prefix
  const header: { -readonly [K in keyof RequestHeader]: RequestHeader[K] } = {
    config: withPrefixCount(config === seed ? seed : pickConfig(config), prefix.length),
  }
  if (systemText !== undefined) header.system = systemText
  if (tools.length > 0) header.tools = tools
  if (prefix.length > 0) header.messagePrefix = prefix
  // A quiet render never awaits, so the registry cannot have changed since `toolsVersion` was read.
  const quiet = listened ? undefined : { toolsVersion, toolNames, seed, system: base, prefix }
  return { header: canonicalHeader(header), quiet }
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
