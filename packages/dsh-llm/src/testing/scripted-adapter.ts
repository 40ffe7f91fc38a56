/** A fake provider for tests: plays prepared chunk lists, one script step per call. */
import { llmFailure } from '../errors.ts'
import { frozenCopy } from '../freeze.ts'
import type { LlmAdapter, LlmRequest } from '../request.ts'
import type { StreamChunk } from '../stream.ts'

/** The chunks of one call, given directly or computed from the request and the 0-based call index. */
export type ScriptChunks =
  | readonly StreamChunk[]
  | ((request: LlmRequest, callIndex: number) => readonly StreamChunk[])

/** A step whose chunks are played after `delayMs` (an aborted signal cuts the wait short). */
export interface DelayedStep {
  readonly chunks: ScriptChunks
  readonly delayMs: number
}

/** A step made by `hangUntilAborted`. */
export interface HangStep {
  readonly kind: 'hang-until-aborted'
  readonly prefix: readonly StreamChunk[]
}

/** A step made by `throwAfter`. */
export interface ThrowStep {
  readonly kind: 'throw-after'
  readonly prefix: readonly StreamChunk[]
  readonly error: unknown
}

/** One call's worth of script. */
export type ScriptStep = ScriptChunks | DelayedStep | HangStep | ThrowStep

/** An `LlmAdapter` that plays a script and records what it was asked. */
export interface ScriptedAdapter extends LlmAdapter {
  /** Every request received, in call order: deep-frozen copies, `signal` left out. */
  readonly requests: readonly LlmRequest[]
  /** How many times `stream` was called. */
  readonly callCount: number
}

/**
 * A step that yields `prefix`, then waits until `request.signal` aborts and ends with
 * `finish {kind: 'aborted', failure: {code: 'ABORTED'}}`. Without a signal the call ends at once
 * with `finish {kind: 'error'}` code `INVALID_REQUEST` instead of hanging the test.
 */
export function hangUntilAborted(prefix: readonly StreamChunk[] = []): HangStep {
  return { kind: 'hang-until-aborted', prefix }
}

/** A step that yields `prefix`, then throws `error` from the iteration (an adapter breaking its contract). */
export function throwAfter(error: unknown, prefix: readonly StreamChunk[] = []): ThrowStep {
  return { kind: 'throw-after', prefix, error }
}

/**
 * Builds a scripted adapter. Call N (1-based) plays `script[N-1]`; each call is recorded when
 * `stream` is invoked. Every step honours `request.signal`: once it is aborted the call ends with
 * an aborted `finish`. Past the end of the script a call yields `finish {kind: 'error'}` with code
 * `SCRIPT_EXHAUSTED` and message `scripted adapter: no step for call #N (script has M steps)`.
 */
export function scriptedAdapter(script: readonly ScriptStep[]): ScriptedAdapter {
  const requests: LlmRequest[] = []
  return {
    get requests() {
      return Object.freeze([...requests])
    },
    get callCount() {
      return requests.length
    },
    stream(request: LlmRequest): AsyncIterable<StreamChunk> {
      const { signal: _signal, ...recorded } = request
      // Loop-built requests are deep-frozen already: keep their parts instead of copying the whole
      // history on every call (that would make a long scripted run quadratic).
      requests.push(Object.isFrozen(request) ? Object.freeze(recorded) : frozenCopy(recorded))
      const callIndex = requests.length - 1
      return play(script, callIndex, request)
    },
  }
}

function finish(kind: 'aborted' | 'error', code: string, message: string): StreamChunk {
  return Object.freeze({
    type: 'finish',
    reason: Object.freeze({ kind, failure: llmFailure(code, message) }),
  })
}

async function* playChunks(chunks: readonly StreamChunk[], call: number, signal: AbortSignal | undefined) {
  for (const chunk of chunks) {
    if (signal?.aborted === true) {
      yield finish('aborted', 'ABORTED', `scripted adapter: call #${call} aborted`)
      return false
    }
    yield chunk
  }
  return true
}

async function* play(script: readonly ScriptStep[], callIndex: number, request: LlmRequest) {
  const call = callIndex + 1
  const step = script[callIndex]
  const signal = request.signal
  if (step === undefined) {
    const message = `scripted adapter: no step for call #${call} (script has ${script.length} steps)`
    yield finish('error', 'SCRIPT_EXHAUSTED', message)
    return
  }
  if (isChunks(step)) {
    yield* playChunks(resolveChunks(step, request, callIndex), call, signal)
    return
  }
  if ('delayMs' in step) {
    await sleep(step.delayMs, signal)
    yield* playChunks(resolveChunks(step.chunks, request, callIndex), call, signal)
    return
  }
  if (!(yield* playChunks(step.prefix, call, signal))) return
  if (step.kind === 'throw-after') throw step.error
  if (signal === undefined) {
    yield finish(
      'error',
      'INVALID_REQUEST',
      `scripted adapter: call #${call} hangs until aborted but has no signal`,
    )
    return
  }
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
  yield finish('aborted', 'ABORTED', `scripted adapter: call #${call} aborted`)
}

function isChunks(step: ScriptStep): step is ScriptChunks {
  return Array.isArray(step) || typeof step === 'function'
}

function resolveChunks(chunks: ScriptChunks, request: LlmRequest, callIndex: number): readonly StreamChunk[] {
  return typeof chunks === 'function' ? chunks(request, callIndex) : chunks
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve()
    const onAbort = () => {
      clearTimeout(timer)
      resolve()
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
