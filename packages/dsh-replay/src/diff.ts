/** Leaf-level differences between two JSON values, for telling a person why a request missed. */
import { isRecord } from 'dsh-llm'
import type { Json } from './canonical.ts'

/** One place where the recorded value and the new one differ. `undefined` means absent. */
export interface Difference {
  /** Path in JS notation from the request root: `messages[3].content[0].text`. */
  readonly path: string
  readonly recorded: Json | undefined
  readonly got: Json | undefined
}

function walk(path: string, recorded: Json | undefined, got: Json | undefined, out: Difference[]): void {
  if (Array.isArray(recorded) && Array.isArray(got)) {
    const length = Math.max(recorded.length, got.length)
    for (let i = 0; i < length; i++) walk(`${path}[${i}]`, recorded[i], got[i], out)
    return
  }
  if (isRecord(recorded) && isRecord(got)) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(got)])].sort()
    for (const key of keys) walk(path === '' ? key : `${path}.${key}`, recorded[key], got[key], out)
    return
  }
  if (JSON.stringify(recorded) !== JSON.stringify(got)) out.push({ path, recorded, got })
}

/** Every leaf where `recorded` and `got` differ, in path order (arrays by index, objects by key). */
export function jsonDifferences(recorded: Json, got: Json): Difference[] {
  const out: Difference[] = []
  walk('', recorded, got, out)
  return out
}

const SHOWN = 120

function show(value: Json | undefined): string {
  if (value === undefined) return '(absent)'
  const text = JSON.stringify(value)
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}… (${text.length} chars)` : text
}

/** One line per difference, `path: recorded X, got Y`, long values cut at 120 characters. */
export function formatDifference(difference: Difference): string {
  return `${difference.path || '(root)'}: recorded ${show(difference.recorded)}, got ${show(difference.got)}`
}
