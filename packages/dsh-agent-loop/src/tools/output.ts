/**
 * What a tool hands back, checked before it can reach the log: a tool result, plain JSON, valid
 * content blocks, well-formed text. A failed check is the tool's error result, not the turn's end.
 */
import { type ContentBlock, isWellFormed, wellFormedJson } from 'dsh-llm'
import { contentBlockSchema, SessionError, snapshotJson } from 'dsh-session'
import { z } from 'zod'
import { describeError } from '../errors.ts'
import type { ToolOutput } from '../types.ts'

const blocksSchema = z.array(contentBlockSchema)

/** A tool output the log accepts, or the problem that keeps it out. */
export type CheckedOutput =
  | { readonly ok: true; readonly output: ToolOutput }
  | { readonly ok: false; readonly problem: string }

/**
 * Checks `output.content`: plain JSON (no BigInt, function, symbol, cycle, class instance, NaN,
 * `undefined` member — `toJSON` is not consulted) and valid content blocks. On success returns a
 * detached copy with every lone surrogate replaced by U+FFFD. Never throws.
 */
export function checkOutput(output: ToolOutput): CheckedOutput {
  if (plainTextBlocks(output.content)) return { ok: true, output }
  let content: readonly ContentBlock[]
  try {
    content = snapshotJson(output.content, 'tool output', 'content')
  } catch (error) {
    if (error instanceof SessionError && error.where.path !== undefined) {
      const problem = error.message
        .slice(error.message.indexOf(error.where.path))
        .replace(/; event data must be plain JSON$/, '')
      return { ok: false, problem: `its content is not plain JSON: ${problem}` }
    }
    return { ok: false, problem: `its content is not plain JSON: ${describeError(error)}` }
  }
  const parsed = blocksSchema.safeParse(content)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where =
      issue === undefined
        ? 'content'
        : `content${issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('')}`
    return { ok: false, problem: `${where} is not a valid content block: ${issue?.message ?? 'invalid'}` }
  }
  return { ok: true, output: { content: wellFormedJson(content), isError: output.isError } }
}

/**
 * The common case, checked without a copy or a schema: every block is a plain `{type: 'text',
 * text}` object with exactly those keys and well-formed text.
 */
function plainTextBlocks(content: readonly ContentBlock[]): boolean {
  if (!Array.isArray(content)) return false
  for (const block of content as readonly unknown[]) {
    if (block === null || typeof block !== 'object' || Object.getPrototypeOf(block) !== Object.prototype)
      return false
    const { type, text } = block as { type?: unknown; text?: unknown }
    if (type !== 'text' || typeof text !== 'string' || !isWellFormed(text)) return false
    let keys = 0
    for (const key in block) {
      if (!Object.hasOwn(block, key) || (key !== 'type' && key !== 'text')) return false
      keys++
    }
    if (keys !== 2) return false
  }
  return true
}

/** How a value a tool returned reads in an error message: its kind, never its (possibly huge) text. */
export function describeReturn(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array that is not content blocks'
  switch (typeof value) {
    case 'bigint':
      return 'a BigInt'
    case 'function':
      return 'a function'
    case 'symbol':
      return 'a symbol'
    case 'number':
    case 'boolean':
      return `the ${typeof value} ${String(value)}`
    case 'object':
      return 'an object'
    default:
      return `a ${typeof value}`
  }
}
