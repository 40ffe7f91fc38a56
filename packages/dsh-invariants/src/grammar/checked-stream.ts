/**
 * The stream grammar as a check on a stream (`checkChunks` from dsh-llm): each chunk goes through a
 * fresh `StreamGrammar` before the consumer sees it, in the reaction the stream spends on the chunk
 * anyway. Under the runtime's `llm/stream` chain that is the listener's own reaction, so the checked
 * stream costs no promise of its own per chunk.
 */
import { checkChunks, type StreamCheck, type StreamChunk } from 'dsh-llm'
import { StreamGrammar } from './stream-grammar.ts'

/** A fresh `StreamGrammar` as a `StreamCheck`: each violation it finds becomes `fail(message)`. */
export function grammarCheck(fail: (message: string) => Error): StreamCheck {
  const grammar = new StreamGrammar()
  return {
    chunk(chunk) {
      const problem = grammar.push(chunk)
      return problem === undefined ? undefined : fail(problem)
    },
    end() {
      const problem = grammar.end()
      return problem === undefined ? undefined : fail(problem)
    },
  }
}

/**
 * Wraps `source` so every chunk is checked by a fresh `StreamGrammar` before the consumer sees it.
 * On a violation `fail(message)` is called and must return the error to throw; the iterator then
 * throws it in place of the offending chunk (or at the end, for a missing `finish`) and closes the
 * source. A `finish` chunk is delivered only once the source has ended, so a chunk after `finish` is
 * caught even when the consumer would stop at `finish`. A consumer that stops early (`break`) ends
 * the check silently. The source is opened at the first `next()`; calls made without waiting for the
 * previous one are answered in order. The iterator answers `next`, `return` and `throw` as an async
 * generator does, and is its own async iterator.
 */
export function checkedStream(
  source: AsyncIterable<StreamChunk>,
  fail: (message: string) => Error,
): AsyncGenerator<StreamChunk> {
  return checkChunks(source, grammarCheck(fail))[Symbol.asyncIterator]() as AsyncGenerator<StreamChunk>
}
