/**
 * One compaction of a session: choose the strategy (prune long tool results, or summarize the
 * history before a kept tail), record it as `compaction/start`, its surface replaces, and
 * `compaction/end`, each made durable before the next. Works on a bare session; the plugin only
 * decides when to call it.
 */
import type { LlmRequest, Message, StreamChunk } from 'dsh-llm'
import type { Session, SurfaceMeta } from 'dsh-session'
import { compactionMessagePrefix } from 'dsh-session'
import { chooseCut, largestFittingBoundary } from './cut.ts'
import { CompactionError } from './errors.ts'
import { ledgerOf } from './ledger.ts'
import { contextPressure } from './pressure.ts'
import { type PruneEntry, planPrune } from './prune.ts'
import type { CompactionSettings } from './settings.ts'
import {
  DEFAULT_SUMMARY_INSTRUCTION,
  readSummary,
  summaryInstruction,
  summaryMessage,
  summaryRequest,
} from './summarize.ts'
import type { TokenEstimator } from './tokens.ts'
import type { CompactionResult, CompactionStrategy, CompactionTrigger } from './types.ts'

/** What one compaction needs. */
export interface CompactInput {
  readonly session: Session
  readonly trigger: CompactionTrigger
  readonly settings: CompactionSettings
  readonly estimator: TokenEstimator
  /** Streams the summarizing request (the plugin passes `ctx.llm.stream` or the chosen adapter). */
  readonly stream: (request: LlmRequest) => AsyncIterable<StreamChunk>
  /** Messages about to enter the history (a pre-step's claimed batch), counted in the pressure. */
  readonly pending?: readonly Message[]
  readonly signal?: AbortSignal
  /** The turn and step the compaction runs in, recorded on `compaction/start`. */
  readonly position?: { readonly turn: number; readonly step: number }
  /** `auto` (default): prune when that reaches the target, else summarize. */
  readonly strategy?: CompactionStrategy | 'auto'
}

const running = new WeakSet<Session>()

/** Tokens set aside for the summarizing instruction and the request's framing. */
const INSTRUCTION_ROOM = 512

/**
 * Compacts `session` once. Resolves with what happened: `completed` (the surface was replaced),
 * `rejected` (the summary was not shorter than what it stood for), `failed` (the summarizing call
 * failed), or `skipped` (nothing to compact; no events written). Throws `COMPACTION_IN_PROGRESS` when
 * this process is already compacting the session and `COMPACTION_OPEN` when the log holds an open
 * compaction; rejects with what a refused append or a failed flush throws.
 */
export async function compactSession(input: CompactInput): Promise<CompactionResult> {
  const { session } = input
  if (running.has(session)) {
    throw new CompactionError(
      'COMPACTION_IN_PROGRESS',
      `session ${session.id} is already being compacted in this process`,
    )
  }
  const open = ledgerOf(session).open
  if (open !== undefined) {
    throw new CompactionError(
      'COMPACTION_OPEN',
      `session ${session.id} has an open compaction ${open.data.id} (compaction/start at seq ${open.seq} has no compaction/end)`,
    )
  }
  running.add(session)
  try {
    return await compactOnce(input)
  } finally {
    running.delete(session)
  }
}

async function compactOnce(input: CompactInput): Promise<CompactionResult> {
  const { session, settings, estimator } = input
  const ledger = ledgerOf(session)
  const history = session.deriveMessages()
  const nodeSeqs = ledger.nodeSeqs.slice()
  const pending = input.pending ?? []
  const before = contextPressure(session, settings.window, estimator, pending).tokens
  const id = `compaction-${ledger.started + 1}`
  const prefix = compactionMessagePrefix(id)
  const cut = chooseCut(history, settings.keepTokens, estimator)
  const strategy = input.strategy ?? 'auto'
  const pruneTo = input.trigger === 'overflow' ? history.length : cut
  const prunes =
    settings.prune === false || strategy === 'summarize'
      ? []
      : planPrune(history, nodeSeqs, { from: 0, to: pruneTo }, settings.prune, estimator, prefix)
  const saved = prunes.reduce((sum, entry) => sum + entry.saved, 0)
  const target = settings.targetRatio * settings.window
  const pruneEnough = prunes.length > 0 && before - saved <= target
  if (strategy === 'prune' || pruneEnough || (cut === 0 && prunes.length > 0)) {
    if (prunes.length === 0) return { kind: 'skipped', reason: 'no tool result is long enough to prune' }
    return prune(input, id, before, prunes)
  }
  if (cut === 0) return { kind: 'skipped', reason: 'the whole history fits in the kept tail' }
  return summarize(input, id, before, history, nodeSeqs, cut)
}

function position(input: CompactInput): { turn?: number; step?: number } {
  return input.position === undefined ? {} : { turn: input.position.turn, step: input.position.step }
}

async function prune(
  input: CompactInput,
  id: string,
  before: number,
  prunes: readonly PruneEntry[],
): Promise<CompactionResult> {
  const { session, settings } = input
  session.append('compaction/start', {
    id,
    trigger: input.trigger,
    strategy: 'prune',
    window: settings.window,
    tokensBefore: before,
    replaces: prunes.length,
    ...position(input),
  })
  await session.flush()
  for (const entry of prunes) {
    const surface: SurfaceMeta = {
      op: 'replace',
      start: entry.index,
      end: entry.index + 1,
      sourceEventSeqs: [entry.sourceSeq],
    }
    session.append('user/message', entry.message, surface)
    await session.flush()
  }
  const after = contextPressure(session, settings.window, input.estimator, input.pending).tokens
  session.append('compaction/end', { id, outcome: 'completed', tokensAfter: after })
  await session.flush()
  return { kind: 'completed', id, strategy: 'prune', tokensBefore: before, tokensAfter: after }
}

async function summarize(
  input: CompactInput,
  id: string,
  before: number,
  history: readonly Message[],
  nodeSeqs: readonly number[],
  cut: number,
): Promise<CompactionResult> {
  const { session, settings, estimator } = input
  const header = session.requestHeader()?.header
  const { summarizer } = settings
  if (header === undefined) {
    throw new CompactionError(
      'NO_REQUEST_HEADER',
      `session ${session.id} has no request/header to build the summarizing request from`,
    )
  }
  // The whole history when it fits (so the request reads the prompt cache), else the longest
  // balanced prefix that does; the summary then stands for that prefix only. `scale` corrects the
  // estimate by what the provider counted (and by the overflow itself, which proves it low).
  const headerTokens = estimator.header(header)
  const estimated = headerTokens + estimator.messages(history) + estimator.messages(input.pending ?? [])
  let scale = Math.max(1, before / Math.max(1, estimated))
  if (input.trigger === 'overflow') scale = Math.max(scale, (settings.window * 1.1) / Math.max(1, estimated))
  const room = settings.window - settings.summaryMaxTokens - INSTRUCTION_ROOM
  let upTo = history.length
  let end = cut
  if ((headerTokens + estimator.messages(history)) * scale > room) {
    upTo = largestFittingBoundary(history, cut, room / scale - headerTokens, estimator)
    end = upTo
  }
  if (end === 0) return { kind: 'skipped', reason: 'no part of the history fits a summarizing request' }
  session.append('compaction/start', {
    id,
    trigger: input.trigger,
    strategy: 'summarize',
    window: settings.window,
    tokensBefore: before,
    replaces: 1,
    summarizes: end,
    ...position(input),
  })
  await session.flush()
  const template = summarizer.instruction ?? DEFAULT_SUMMARY_INSTRUCTION
  const instruction = summaryInstruction(template, end, history.length - end, `${id}:instruction`)
  const request = summaryRequest(
    header,
    history.slice(0, upTo),
    instruction,
    {
      maxTokens: settings.summaryMaxTokens,
      ...(summarizer.provider === undefined ? {} : { provider: summarizer.provider }),
      ...(summarizer.model === undefined ? {} : { model: summarizer.model }),
    },
    { sessionId: session.id, ...(input.signal === undefined ? {} : { signal: input.signal }) },
  )
  const answer = await readSummary(() => input.stream(request))
  if (answer.kind === 'failed') return finish(session, id, 'failed', answer.reason)
  const message = summaryMessage(answer.text, `${id}:summary`)
  const replaced = estimator.messages(history, 0, end)
  if (estimator.message(message) >= replaced) {
    const reason = `the summary (${estimator.message(message)} tokens) is not shorter than the ${end} messages it would replace (${replaced} tokens)`
    return finish(session, id, 'rejected', reason)
  }
  session.append('user/message', message, {
    op: 'replace',
    start: 0,
    end,
    sourceEventSeqs: nodeSeqs.slice(0, end),
  })
  await session.flush()
  const after = contextPressure(session, settings.window, estimator, input.pending).tokens
  session.append('compaction/end', { id, outcome: 'completed', tokensAfter: after })
  await session.flush()
  return { kind: 'completed', id, strategy: 'summarize', tokensBefore: before, tokensAfter: after }
}

async function finish(
  session: Session,
  id: string,
  outcome: 'rejected' | 'failed',
  reason: string,
): Promise<CompactionResult> {
  session.append('compaction/end', { id, outcome, reason })
  await session.flush()
  return { kind: outcome, id, reason }
}
