/**
 * One model call: stream the step's request, log every chunk as `assistant/chunk`, assemble, and
 * append the answer as `assistant/message`. A provider failure comes back as data for the turn's
 * retry decision (`retry.ts`).
 */
import {
  type AssistantMessage,
  BlockAssembler,
  createAssistantMessage,
  type EventBus,
  type FinishReason,
  LlmErrorCode,
  type LlmFailure,
  type LlmRequest,
  type LlmRuntime,
  llmFailure,
  type Message,
  type RetryPolicy,
  type StreamChunk,
  StreamListenerError,
  streamInLoopStep,
  streamListenerOf,
  type ToolCallBlock,
} from 'dsh-llm'
import type { Session } from 'dsh-session'
import { nextSlice, sliceReading, sliceSpent } from 'dsh-session'
import { AgentLoopErrorCode, describeError, errorCode } from '../errors.ts'
import { abortWatchers } from '../timing/cancel.ts'
import type { ToolRegistry } from '../tools/registry.ts'
import type { AgentOptions, AgentWarning, TurnPosition } from '../types.ts'
import type { HeaderEnv } from './header.ts'
import type { RetryEnv } from './retry.ts'
import { StreamGuard, type TakenCallIds } from './stream-guard.ts'

/** What a step's model call needs from its agent: its header, the call itself and its retries. */
export interface ModelCallEnv extends HeaderEnv, RetryEnv {
  readonly bus: EventBus
  readonly llm: LlmRuntime
  readonly tools: ToolRegistry
  readonly session: Session
  readonly options: AgentOptions
  readonly policy: RetryPolicy
  /** The instance's session prefix once composed (empty until then); see `turn/prefix.ts`. */
  prefix: readonly Message[]
  /** True until this loop instance has recorded its first header; the turn clears it. */
  firstRequest: boolean
  /**
   * Tool-call ids already used in the session's history, extended as answers commit; a new call
   * reusing one is renamed (see `StreamGuard`).
   */
  readonly callIds: CallIdBook
  /** Reports something the loop repaired instead of failing (`agent/warning`). */
  readonly warn: (warning: AgentWarning) => void
}

/** The tool-call ids of a session's history, as the stream guard asks about them. */
export interface CallIdBook extends TakenCallIds {
  add(id: string): void
}

/** Closed: how one step's model call ended. */
export type ModelCallOutcome =
  | {
      readonly kind: 'answered'
      readonly message: AssistantMessage
      readonly finish: FinishReason
      readonly toolCalls: readonly ToolCallBlock[]
    }
  | { readonly kind: 'failed'; readonly failure: LlmFailure }
  | { readonly kind: 'aborted' }

const ABORTED = Symbol('aborted')
const ENDED = Symbol('ended')

/** How reading a stream stopped: cancelled, the stream ended, or it threw. */
type ReadEnd = typeof ABORTED | typeof ENDED | { readonly failure: LlmFailure }

/**
 * Streams `request` (built by `buildLoopRequest` for the step at `position`) and records the answer:
 * `assistant/chunk` per chunk, then exactly one `assistant/message` when the model answered (an
 * `interrupted` one when a cancelled stream had visible text). A provider failure is returned as
 * `failed` with nothing but its chunks logged; the caller decides about a retry. Rejects only for a
 * refused append.
 */
export async function callModel(
  env: ModelCallEnv,
  position: TurnPosition,
  request: LlmRequest,
): Promise<ModelCallOutcome> {
  const { session } = env
  const { turn, step, signal } = position
  const assembler = new BlockAssembler()
  const guard = new StreamGuard(env.callIds, (problem) =>
    env.warn({ code: AgentLoopErrorCode.INVALID_USAGE, message: `turn ${turn} step ${step}: ${problem}` }),
  )
  let iterator: AsyncIterator<StreamChunk>
  try {
    iterator = streamInLoopStep(env.llm, request)[Symbol.asyncIterator]()
  } catch (error) {
    return { kind: 'failed', failure: streamFailure(error) }
  }
  // One reader per stream awaits the chunks directly; only the wait for the whole read races the
  // turn's signal, so a chunk costs one reaction rather than a racing promise of its own. `reading`
  // turns false when the signal aborts (its watcher runs inside `abort()`) or the read is over:
  // a reader that wakes up later (from a chunk, a slice or backpressure wait) stops there.
  let done = false
  let reading = true
  // Each chunk's continuation is a `then` callback rather than an `await`: an await costs about
  // twice the allocation of a reaction, once per streamed chunk. The order of work is the loop's:
  // wait for the chunk, stop if the read is over, yield while the slice is spent, log the chunk,
  // wait out backpressure, ask for the next one. Anything the logging throws rejects the read.
  const read = (): Promise<ReadEnd> =>
    new Promise<ReadEnd>((settle, fail) => {
      const pull = (): void => {
        if (!reading) {
          settle(ABORTED)
          return
        }
        let pending: Promise<IteratorResult<StreamChunk>>
        try {
          pending = Promise.resolve(iterator.next())
        } catch (error) {
          ended(error)
          return
        }
        pending.then(take, ended)
      }
      const ended = (error: unknown): void => {
        done = true
        settle(signal.aborted ? ABORTED : { failure: streamFailure(error) })
      }
      const take = (next: IteratorResult<StreamChunk>): void => {
        try {
          if (!reading) settle(ABORTED)
          else if (next.done === true) {
            done = true
            settle(ENDED)
          }
          // With the chunk in hand and before logging it: a reader resumed into a slice that is
          // already spent (the other readers resumed in the same turn used it up) yields again
          // without working.
          else if (sliceSpent()) waitSlice(next.value)
          else log(next.value)
        } catch (error) {
          fail(error)
        }
      }
      const waitSlice = (chunk: StreamChunk): void => {
        nextSlice().then(() => {
          try {
            if (sliceSpent()) waitSlice(chunk)
            else if (!reading) settle(ABORTED)
            else log(chunk)
          } catch (error) {
            fail(error)
          }
        }, fail)
      }
      // Called right after a `sliceSpent()` that said no: the chunk's time is that check's clock
      // reading (one clock read per chunk, not two).
      const log = (chunk: StreamChunk): void => {
        const accepted = guard.accept(chunk)
        if (accepted === undefined) {
          session.appendChunk(turn, step, chunk, sliceReading())
          assembler.push(chunk)
        } else {
          logRepaired(session, assembler, turn, step, accepted)
        }
        // Backpressure: behind a slow backend, stop reading the stream until the unsynced events are
        // back under the high-water mark (a backend failure rejects here, as the next flush would).
        if (session.mustWait()) session.writable().then(pull, fail)
        else pull()
      }
      pull()
    })
  const watching = signal.aborted ? undefined : abortWatchers(signal)
  let onAbort: (() => void) | undefined
  let end: ReadEnd
  try {
    end =
      watching === undefined
        ? ABORTED
        : await new Promise<ReadEnd>((resolve, reject) => {
            onAbort = () => {
              reading = false
              resolve(ABORTED)
            }
            watching.add(onAbort)
            read().then(resolve, reject)
          })
  } finally {
    reading = false
    if (onAbort !== undefined) watching?.delete(onAbort)
    // Stopped early (cancelled, or an append was refused): let the stream release its connection.
    // Not awaited — a stream stuck in an await would hold the turn hostage.
    if (!done)
      void Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => undefined)
  }
  if (end === ABORTED) return interrupt(env, position, assembler, request)
  if (end !== ENDED) return { kind: 'failed', failure: end.failure }
  const finish = assembler.finishReason()
  if (finish.kind === 'error' || finish.kind === 'aborted') {
    if (signal.aborted) return interrupt(env, position, assembler, request)
    return { kind: 'failed', failure: finish.failure }
  }
  const message = createAssistantMessage({
    content: assembler.blocks(),
    source: { kind: 'model', provider: request.provider, model: request.model },
  })
  const usage = assembler.usage()
  session.append(
    'assistant/message',
    usage === undefined ? { turn, step, message } : { turn, step, message, usage },
  )
  const toolCalls: ToolCallBlock[] = []
  for (const block of message.content) if (block.type === 'tool-call') toolCalls.push(block)
  for (const call of toolCalls) env.callIds.add(call.id)
  return { kind: 'answered', message, finish, toolCalls }
}

/** Logs and assembles the chunks the stream guard put in place of one it repaired. */
function logRepaired(
  session: Session,
  assembler: BlockAssembler,
  turn: number,
  step: number,
  chunks: readonly StreamChunk[],
): void {
  for (const chunk of chunks) {
    session.appendChunk(turn, step, chunk)
    assembler.push(chunk)
  }
}

/** A cancelled stream keeps its visible text as an `interrupted` assistant message. */
function interrupt(
  env: ModelCallEnv,
  position: TurnPosition,
  assembler: BlockAssembler,
  request: LlmRequest,
): ModelCallOutcome {
  const content = assembler.interruptedBlocks()
  if (content.length > 0) {
    const message = createAssistantMessage({
      content,
      source: { kind: 'model', provider: request.provider, model: request.model },
    })
    const base = { turn: position.turn, step: position.step, message }
    const usage = assembler.usage()
    env.session.append(
      'assistant/message',
      usage === undefined ? { ...base, interrupted: true } : { ...base, usage, interrupted: true },
    )
  }
  return { kind: 'aborted' }
}

function streamFailure(error: unknown): LlmFailure {
  const listener = streamListenerOf(error)
  if (listener !== undefined) {
    // A broken middleware, not a broken provider: the failure names the plugin.
    const message =
      error instanceof StreamListenerError
        ? error.message
        : `llm/stream listener of plugin "${listener}" threw: ${describeError(error)}`
    return llmFailure(errorCode(error, LlmErrorCode.STREAM_LISTENER_FAILED), message)
  }
  return llmFailure(
    errorCode(error, AgentLoopErrorCode.STREAM_THREW),
    `the model stream threw: ${describeError(error)}`,
  )
}
