/**
 * The run line of the JSONL format (version 2): the chunk entries of one run that one write carried,
 * as one line `{"run":seq,"turn":t,"step":s,"times":[...],"chunks":[...]}` — the first entry's seq,
 * the run's turn and step, then each entry's time and chunk in order. It stands for the
 * `assistant/chunk` events of seqs `run` to `run + chunks.length - 1`, which a reader expands it
 * into. Every other line is one event, as in version 1.
 */
import { isRecord } from 'dsh-llm'

/**
 * The run line (no newline) of a run's entries from seq `first` on: `times` and `chunks` are the
 * JSON arrays of their times and chunks (a writer serializes each chunk as it comes, so that it
 * never decodes a sealed run to write it).
 */
export function runLine(first: number, turn: number, step: number, times: string, chunks: string): string {
  return `{"run":${first},"turn":${turn},"step":${step},"times":${times},"chunks":${chunks}}`
}

/** Whether a parsed line is a run line (an object with its own `run` member), not an event. */
export function isRunLine(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && Object.hasOwn(value, 'run')
}

const RUN_KEYS = ['run', 'turn', 'step', 'times', 'chunks']

/**
 * The `assistant/chunk` events a parsed run line stands for, as plain unfrozen values in envelope key
 * order (to be checked against the catalog like any event line). Returns the reason as a string when
 * the line is not a well-formed run line: other keys, a seq that is not a count, times and chunks
 * that are not arrays of one length (at least one).
 */
export function expandRunLine(value: Record<string, unknown>): unknown[] | string {
  let i = 0
  for (const key in value) {
    if (key !== RUN_KEYS[i])
      return `a run line has keys ${JSON.stringify(Object.keys(value))}; expected ${JSON.stringify(RUN_KEYS)}`
    i++
  }
  if (i !== RUN_KEYS.length)
    return `a run line has keys ${JSON.stringify(Object.keys(value))}; expected ${JSON.stringify(RUN_KEYS)}`
  const { run, turn, step, times, chunks } = value
  if (typeof run !== 'number' || !Number.isSafeInteger(run) || run < 0)
    return `a run line's run is ${JSON.stringify(run)}, not a seq`
  if (
    !Array.isArray(times) ||
    !Array.isArray(chunks) ||
    times.length !== chunks.length ||
    chunks.length === 0
  ) {
    return 'a run line needs times and chunks as arrays of one length (at least one)'
  }
  const events: unknown[] = new Array(chunks.length)
  for (let k = 0; k < chunks.length; k++) {
    events[k] = {
      type: 'assistant/chunk',
      seq: run + k,
      time: times[k],
      data: { turn, step, chunk: chunks[k] },
    }
  }
  return events
}

/**
 * The JSON texts of the events that encoded lines stand for (`text`: lines, each ending in a newline;
 * `count` events), run lines expanded: what a store compares with events it already holds.
 */
export function eventTexts(text: string, count: number): string[] {
  const out: string[] = []
  let start = 0
  while (out.length < count && start < text.length) {
    let end = text.indexOf('\n', start)
    if (end < 0) end = text.length
    const line = text.slice(start, end)
    start = end + 1
    if (!line.startsWith('{"run":')) {
      out.push(line)
      continue
    }
    const events = expandRunLine(JSON.parse(line) as Record<string, unknown>)
    if (typeof events === 'string') throw new Error(`eventTexts: ${events}`)
    for (const event of events) out.push(JSON.stringify(event))
  }
  return out.slice(0, count)
}
