/**
 * The cheap first stage: a long tool result keeps the head and the tail of its text, with a marker
 * saying how much was cut. The result stays a result of the same call, so pairing is untouched.
 */
import { createToolResultMessage, isToolResultMessage, type Message, type ToolResultMessage } from 'dsh-llm'
import type { TokenEstimator } from './tokens.ts'

/** Resolved prune knobs. */
export interface PruneSettings {
  readonly aboveTokens: number
  readonly headChars: number
  readonly tailChars: number
}

/** Defaults of the prune stage. */
export const DEFAULT_PRUNE: PruneSettings = Object.freeze({
  aboveTokens: 1024,
  headChars: 1200,
  tailChars: 800,
})

/** One planned prune: surface node `index` (from event `sourceSeq`) becomes `message`. */
export interface PruneEntry {
  readonly index: number
  readonly sourceSeq: number
  readonly message: ToolResultMessage
  /** Estimated tokens saved. */
  readonly saved: number
}

/** The text a pruned result keeps: `head`, a marker naming how many characters were cut, `tail`. */
export function prunedText(text: string, settings: PruneSettings): string {
  const cut = text.length - settings.headChars - settings.tailChars
  if (cut <= 0) return text
  const head = text.slice(0, settings.headChars)
  const tail = text.slice(text.length - settings.tailChars)
  return `${head}\n\n[... ${cut} characters of this tool result were pruned to save context ...]\n\n${tail}`
}

function resultText(message: ToolResultMessage): string {
  const parts: string[] = []
  for (const block of message.content[0].content) {
    if (block.type === 'text') parts.push(block.text)
    else parts.push(JSON.stringify(block))
  }
  return parts.join('\n')
}

/**
 * The prunes of `history[from, to)`: every tool result estimated over `aboveTokens` whose pruned text
 * is shorter, in surface order. `nodeSeqs[i]` is the seq of the event behind node `i`; the pruned
 * message gets id `<idPrefix><original id>`.
 */
export function planPrune(
  history: readonly Message[],
  nodeSeqs: readonly number[],
  range: { readonly from: number; readonly to: number },
  settings: PruneSettings,
  estimator: TokenEstimator,
  idPrefix: string,
): PruneEntry[] {
  const out: PruneEntry[] = []
  for (let index = range.from; index < range.to; index++) {
    const message = history[index]
    const sourceSeq = nodeSeqs[index]
    if (message === undefined || sourceSeq === undefined || !isToolResultMessage(message)) continue
    const before = estimator.message(message)
    if (before <= settings.aboveTokens) continue
    const original = resultText(message)
    const text = prunedText(original, settings)
    if (text.length >= original.length) continue
    const block = message.content[0]
    const pruned = createToolResultMessage({
      id: `${idPrefix}${message.id}`,
      callId: block.toolCallId,
      content: [{ type: 'text', text }],
      ...(block.isError === true ? { isError: true } : {}),
    })
    out.push({ index, sourceSeq, message: pruned, saved: before - estimator.message(pruned) })
  }
  return out
}
