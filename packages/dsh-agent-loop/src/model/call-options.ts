/** The call options of `create`/`resume`, checked before anything is created. */
import { REASONING_EFFORTS } from 'dsh-llm'
import { AgentLoopError, AgentLoopErrorCode } from '../errors.ts'

const EFFORTS = REASONING_EFFORTS

function invalid(where: string, problem: string): AgentLoopError {
  return new AgentLoopError(AgentLoopErrorCode.INVALID_OPTIONS, `${where}: ${problem}`)
}

function shown(value: unknown): string {
  if (typeof value === 'number') return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return typeof value
  }
}

function checkRange(where: string, field: string, value: unknown, max: number): void {
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw invalid(where, `${field} must be a finite number in [0, ${max}], got ${shown(value)}`)
  }
}

/**
 * Checks the sampling fields of `options`: `maxTokens` an integer >= 1; `temperature` a finite
 * number in [0, 2]; `topP` (read by adapters that support it) a finite number in [0, 1];
 * `reasoningEffort` one of `low`, `medium`, `high`; `stop` an array of strings. Throws
 * `AgentLoopError` `INVALID_OPTIONS` whose message starts with `where` and names the field.
 */
export function checkCallOptions(where: string, options: object): void {
  const { maxTokens, temperature, topP, reasoningEffort, stop } = options as Record<string, unknown>
  if (
    maxTokens !== undefined &&
    (typeof maxTokens !== 'number' || !Number.isSafeInteger(maxTokens) || maxTokens < 1)
  ) {
    throw invalid(where, `maxTokens must be an integer >= 1, got ${shown(maxTokens)}`)
  }
  checkRange(where, 'temperature', temperature, 2)
  checkRange(where, 'topP', topP, 1)
  if (reasoningEffort !== undefined && !(EFFORTS as readonly unknown[]).includes(reasoningEffort)) {
    throw invalid(
      where,
      `reasoningEffort must be one of ${EFFORTS.map((effort) => `'${effort}'`).join(', ')}, got ${shown(reasoningEffort)}`,
    )
  }
  checkCachePolicy(where, (options as Record<string, unknown>).cachePolicy)
  if (stop === undefined) return
  if (!Array.isArray(stop)) throw invalid(where, `stop must be an array of strings, got ${shown(stop)}`)
  stop.forEach((entry: unknown, index) => {
    if (typeof entry !== 'string')
      throw invalid(where, `stop[${index}] must be a string, got ${shown(entry)}`)
  })
}

/** `cachePolicy` (issue 32): absent, or `{breakpoints: 'auto' | 'none', ttl?: '5m' | '1h'}`. */
function checkCachePolicy(where: string, policy: unknown): void {
  if (policy === undefined) return
  const record = (typeof policy === 'object' && policy !== null ? policy : {}) as Record<string, unknown>
  if (record.breakpoints !== 'auto' && record.breakpoints !== 'none') {
    throw invalid(where, `cachePolicy.breakpoints must be 'auto' or 'none', got ${shown(record.breakpoints)}`)
  }
  if (record.ttl !== undefined && record.ttl !== '5m' && record.ttl !== '1h') {
    throw invalid(where, `cachePolicy.ttl must be '5m' or '1h', got ${shown(record.ttl)}`)
  }
}
