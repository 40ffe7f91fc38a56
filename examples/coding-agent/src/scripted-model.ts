/**
 * The embedded model: a scripted adapter from `dsh-llm/testing` that plays the demo's answers, one
 * script step per model call, streamed word by word. It makes the demo run anywhere, with no key, and
 * print the same transcript every time.
 */
import { setTimeout } from 'node:timers/promises'
import type { Context } from 'cordis'
import type { StreamChunk } from 'dsh-llm'
import {
  hangUntilAborted,
  type ScriptedAdapter,
  type ScriptedToolCall,
  scriptedAdapter,
  textBlockChunks,
  textResponse,
  toolCallChunks,
} from 'dsh-llm/testing'

/** A streamed lead text, then tool calls: what a model says while it works. */
function sayThenCall(text: string, ...calls: ScriptedToolCall[]): StreamChunk[] {
  return [
    ...textBlockChunks(0, text, { deltas: 'words' }),
    ...calls.flatMap((call, i) => toolCallChunks(i + 1, call)),
    { type: 'usage', usage: { inputTokens: 0, outputTokens: 0 } },
    { type: 'finish', reason: { kind: 'tool-calls' } },
  ]
}

/** The beginning of an answer that never finishes on its own: the stream waits until it is cancelled. */
function startTalking(text: string): ReturnType<typeof hangUntilAborted> {
  const deltas = text.split(/(?<=\s)(?=\S)/)
  return hangUntilAborted([
    { type: 'block-start', index: 0, blockType: 'text' },
    ...deltas.map((part) => ({ type: 'text-delta', index: 0, text: part }) as const),
  ])
}

/** A fresh scripted model for one run of the demo (all three turns, across the restart). */
export function scriptedModel(): ScriptedAdapter {
  return scriptedAdapter([
    // Turn 1, step 1: look around.
    sayThenCall("I'll start by listing the project's files.", {
      id: 'call_1',
      name: 'list_files',
      args: { path: '.' },
    }),
    // Step 2: the steering message ("also count the lines in src/") arrived with the listing.
    sayThenCall(
      'Three files. Reading the README and the multiply function; I will count the lines in src/ as you asked.',
      { id: 'call_2', name: 'read_file', args: { path: 'README.md' } },
      { id: 'call_3', name: 'read_file', args: { path: 'src/multiply.ts' } },
    ),
    // Step 3: add up the line counts from the listing.
    sayThenCall('Adding up the line counts of src/add.ts and src/multiply.ts.', {
      id: 'call_4',
      name: 'calculate',
      args: { expression: '4 + 8' },
    }),
    // Step 4: the answer.
    textResponse(
      'tiny-calc is an arithmetic library with two functions, `add` (src/add.ts) and `multiply` ' +
        '(src/multiply.ts). `multiply` adds `a` to itself `b` times, so a negative or fractional `b` ' +
        'gives a wrong result: `multiply(2, -3)` returns 0. src/ holds 12 lines in total (4 + 8).',
      { deltas: 'words' },
    ),
    // Turn 2: a long answer the user cancels halfway.
    startTalking('Design doc: division for tiny-calc. 1. Goals: add `divide(a, b)` that '),
    // Turn 3 (after the restart): a tool call, then the answer.
    sayThenCall('Let me compute that.', {
      id: 'call_5',
      name: 'calculate',
      args: { expression: '12 * (7 + 5)' },
    }),
    textResponse(
      '12 * (7 + 5) = 144. `multiply(12, 12)` gets it right too, because both arguments are ' +
        'non-negative integers.',
      { deltas: 'words' },
    ),
  ])
}

/** Configuration of `Pacing`. */
export interface PacingConfig {
  /** The pause before each text or reasoning delta, in milliseconds. */
  readonly delayMs: number
}

/**
 * An `llm/stream` listener that slows text down to reading speed, so the scripted model's answers
 * visibly stream. It wraps the stream `next()` returns and passes every chunk through unchanged.
 */
export const Pacing = {
  name: 'pacing',
  apply(ctx: Context, { delayMs }: PacingConfig) {
    ctx.on('llm/stream', (_request, next) => paced(next(), delayMs))
  },
}

async function* paced(chunks: AsyncIterable<StreamChunk>, delayMs: number): AsyncGenerator<StreamChunk> {
  for await (const chunk of chunks) {
    if (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') await setTimeout(delayMs)
    yield chunk
  }
}
