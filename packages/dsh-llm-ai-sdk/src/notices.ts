/** Notices: what the adapter could not send or keep, reported instead of dropped silently. */
import type { SharedV3Warning } from '@ai-sdk/provider'
import type { AiSdkNotice } from './types.ts'

/**
 * The default notice sink: Node's `process.emitWarning` (type `DshAiSdkNotice`, observable with
 * `process.on('warning')`), else `console.warn` on runtimes without it.
 */
export function defaultNotice(notice: AiSdkNotice): void {
  const proc = (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } })
    .process
  if (typeof proc?.emitWarning === 'function') {
    proc.emitWarning(notice.message, { type: 'DshAiSdkNotice', code: notice.code })
  } else {
    console.warn(`[${notice.code}] ${notice.message}`)
  }
}

/** A provider's call warning as a sentence. */
export function describeWarning(warning: SharedV3Warning): string {
  if (warning.type === 'other') return warning.message
  const details = warning.details === undefined ? '' : ` (${warning.details})`
  return `${warning.type} feature ${warning.feature}${details}`
}
