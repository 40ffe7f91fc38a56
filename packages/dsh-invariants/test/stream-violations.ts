/** Runs the stream grammar over whole chunk sequences, for tests that compare what it reports. */
import { StreamGrammar } from 'dsh-invariants'
import type { StreamChunk } from 'dsh-llm'

/** Every violation message the grammar reports for `chunks`, the end check included. */
export function violations(chunks: readonly StreamChunk[]): string[] {
  const grammar = new StreamGrammar()
  const out: string[] = []
  for (const chunk of chunks) {
    const problem = grammar.push(chunk)
    if (problem !== undefined) out.push(problem)
  }
  const problem = grammar.end()
  if (problem !== undefined) out.push(problem)
  return out
}
