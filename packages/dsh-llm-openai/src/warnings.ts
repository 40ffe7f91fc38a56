/** Non-fatal surprises in a provider's answer, reported rather than silently dropped. */

/** Closed: what a warning is about. */
export type OpenAiWarningCode =
  /** The response carried choices other than 0 (`n > 1`); only choice 0 is used. */
  | 'EXTRA_CHOICES'
  /** A `content` part of a type this adapter cannot map (e.g. an image); it was left out. */
  | 'UNKNOWN_CONTENT_PART'

/** One warning: its code, a message naming the provider, model and what was left out. */
export interface OpenAiWarning {
  readonly code: OpenAiWarningCode
  readonly message: string
  readonly requestId?: string
}

/**
 * The default warning sink: Node's `process.emitWarning` (printed once per code and call on stderr,
 * observable with `process.on('warning')`), else `console.warn` on runtimes without it.
 */
export function defaultWarn(warning: OpenAiWarning): void {
  const proc = (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } })
    .process
  if (typeof proc?.emitWarning === 'function') {
    proc.emitWarning(warning.message, { type: 'DshOpenAiWarning', code: warning.code })
  } else {
    console.warn(`[${warning.code}] ${warning.message}`)
  }
}
