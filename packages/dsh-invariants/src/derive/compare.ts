/**
 * Field-by-field comparison of a request against its re-derivation. Values are compared as JSON: key
 * order does not matter, and a member whose value is `undefined` counts as absent.
 */
import type { LlmRequest, Message } from 'dsh-llm'

/** The first point where two JSON values differ: its path and the two values there. */
export interface Difference {
  readonly path: string
  readonly expected: unknown
  readonly found: unknown
}

/** Marks a member that one side lacks. */
export const ABSENT: unique symbol = Symbol('absent')

/** The first difference between `expected` and `found` under `path`, depth first, or `undefined`. */
export function firstDifference(expected: unknown, found: unknown, path: string): Difference | undefined {
  // Equal values, the common case, are confirmed without building a path or a key set.
  return sameJson(expected, found) ? undefined : locate(expected, found, path)
}

/**
 * Whether `locate` finds no difference between `a` and `b`: the same comparison (a member whose
 * value is `undefined` is absent, key order does not matter), as a yes or no, allocating nothing.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  const isArray = Array.isArray(a)
  if (isArray !== Array.isArray(b)) return false
  if (isArray) {
    const x = a as readonly unknown[]
    const y = b as readonly unknown[]
    if (x.length !== y.length) return false
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i], y[i])) return false
    return true
  }
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  // `for...in` with an own-key test visits what `Object.keys` lists. An absent member reads as
  // `undefined` on both sides, which `sameJson` treats as `locate` treats `ABSENT`.
  for (const key in x) if (Object.hasOwn(x, key) && !sameJson(x[key], y[key])) return false
  for (const key in y) {
    if (Object.hasOwn(y, key) && !isListedKey(x, key) && !sameJson(x[key], y[key])) return false
  }
  return true
}

const listsKey = Object.prototype.propertyIsEnumerable

/** Whether `Object.keys(record)` lists `key` (own and enumerable). */
function isListedKey(record: object, key: string): boolean {
  return listsKey.call(record, key)
}

function locate(expected: unknown, found: unknown, path: string): Difference | undefined {
  if (Object.is(expected, found)) return undefined
  if (typeof expected !== 'object' || typeof found !== 'object' || expected === null || found === null) {
    return { path, expected, found }
  }
  if (Array.isArray(expected) !== Array.isArray(found)) return { path, expected, found }
  if (Array.isArray(expected) && Array.isArray(found)) {
    const length = Math.max(expected.length, found.length)
    for (let i = 0; i < length; i++) {
      const a = i < expected.length ? expected[i] : ABSENT
      const b = i < found.length ? found[i] : ABSENT
      const diff = locate(a, b, `${path}[${i}]`)
      if (diff !== undefined) return diff
    }
    return undefined
  }
  const a = expected as Record<string, unknown>
  const b = found as Record<string, unknown>
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const key of keys) {
    const diff = locate(member(a, key), member(b, key), `${path}.${key}`)
    if (diff !== undefined) return diff
  }
  return undefined
}

function member(record: Record<string, unknown>, key: string): unknown {
  const value = record[key]
  return value === undefined ? ABSENT : value
}

/** A short, single-line rendering of a value for messages (JSON, cut at 100 characters). */
export function excerpt(value: unknown): string {
  if (value === ABSENT) return 'nothing'
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > 100 ? `${text.slice(0, 97)}...` : text
}

function describeMessage(message: Message): string {
  let text = ''
  for (const block of message.content) {
    if (block.type === 'text') text += block.text
  }
  const source = message.source.kind === 'plugin' ? `plugin ${message.source.plugin}` : message.source.kind
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text
  return `${message.role} message ${message.id} (source ${source}${text === '' ? '' : `, text ${JSON.stringify(shown)}`})`
}

/** Request members compared before any others, in this order. `signal` is never compared. */
const FIELD_ORDER = [
  'provider',
  'model',
  'temperature',
  'maxTokens',
  'reasoningEffort',
  'stop',
  'cachePolicy',
  'system',
  'tools',
  'messages',
  'sessionId',
] as const

/** The messages a request should carry, `[...prefix, ...history]`, given in two parts to spare the copy. */
export interface ExpectedMessages {
  readonly prefix: readonly Message[]
  readonly history: readonly Message[]
}

/**
 * Compares `found` (what is about to be sent) with `expected` (what the log implies). Returns
 * `undefined` when they agree, else a sentence naming the first differing field — for `messages`, the
 * first differing index, whether it lies in the header's `messagePrefix` (`prefixLength` messages)
 * or in the derived history, and what each side holds there.
 */
export function compareRequests(
  expected: LlmRequest,
  found: LlmRequest,
  prefixLength: number,
): string | undefined {
  return compareRequestTo(expected, { prefix: [], history: expected.messages }, found, prefixLength)
}

/**
 * `compareRequests` with the expected messages given apart from the rest of the expected request
 * (`expected.messages` is ignored; `prefixLength` only names the parts in messages): the incremental
 * check passes its own fold's history instead of composing a fresh array per request. A message that
 * is the very same object on both sides is equal without being walked, so the cost is one identity
 * test per message plus a walk of those that differ in identity.
 */
export function compareRequestTo(
  expected: LlmRequest,
  expectedMessages: ExpectedMessages | MessagesCompare,
  found: LlmRequest,
  prefixLength: number,
  known?: KnownEqual,
): string | undefined {
  const a = expected as unknown as Record<string, unknown>
  const b = found as unknown as Record<string, unknown>
  for (const field of FIELD_ORDER) {
    const problem =
      field !== 'messages'
        ? compareField(a, b, field, known)
        : typeof expectedMessages === 'function'
          ? expectedMessages()
          : compareMessages(expectedMessages, found.messages, prefixLength)
    if (problem !== undefined) return problem
  }
  // Only a request with members beyond the known ones pays for listing its keys.
  const extra = (record: Record<string, unknown>) => {
    let count = 0
    for (const key in record) if (key !== 'signal' && !KNOWN_FIELDS.has(key)) count++
    return count
  }
  if (extra(a) === 0 && extra(b) === 0) return undefined
  const rest: string[] = []
  for (const record of [a, b]) {
    for (const key of Object.keys(record)) {
      if (key !== 'signal' && !KNOWN_FIELDS.has(key) && !rest.includes(key)) rest.push(key)
    }
  }
  for (const field of rest.sort()) {
    const problem = compareField(a, b, field, known)
    if (problem !== undefined) return problem
  }
  return undefined
}

/** Compares the messages in place of `compareRequestTo`'s walk: the sentence naming the difference, or `undefined`. */
export type MessagesCompare = () => string | undefined

/**
 * Found member values already walked and found equal to an expected value: `equal.get(found) ===
 * expected` spares the walk. Only deep-frozen values are remembered (they cannot change later).
 */
export interface KnownEqual {
  readonly equal: WeakMap<object, unknown>
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set(FIELD_ORDER)

function compareField(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  field: string,
  known?: KnownEqual,
): string | undefined {
  const expected = member(a, field)
  const found = member(b, field)
  if (typeof found === 'object' && found !== null && known?.equal.get(found) === expected) return undefined
  const diff = firstDifference(expected, found, field)
  if (diff === undefined) {
    if (known !== undefined && typeof found === 'object' && found !== null && isDeepFrozen(found)) {
      known.equal.set(found, expected)
    }
    return undefined
  }
  return `field ${field} differs at ${diff.path}: the log implies ${excerpt(diff.expected)}, the request has ${excerpt(diff.found)}`
}

/** Whether `value` and every object reachable from it are frozen (nothing can change it later). */
export function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  if (!Object.isFrozen(value)) return false
  for (const key of Object.keys(value)) {
    if (!isDeepFrozen((value as Record<string, unknown>)[key])) return false
  }
  return true
}

function part(index: number, prefixLength: number): string {
  return index < prefixLength ? `messagePrefix[${index}]` : `history[${index - prefixLength}]`
}

/** The first index where `found` does not hold the very same object as `[...prefix, ...history]`. */
function firstNonIdentical(expected: ExpectedMessages, found: readonly Message[]): number {
  const { prefix, history } = expected
  let i = 0
  for (; i < prefix.length; i++) if (prefix[i] !== found[i]) return i
  for (let j = 0; j < history.length; i++, j++) if (history[j] !== found[i]) return i
  return i
}

/**
 * The first difference between `[...prefix, ...history]` and `found` as a sentence naming the index,
 * the part (prefix or history) and both sides there, or `undefined` when they agree.
 */
export function compareMessages(
  messages: ExpectedMessages,
  found: readonly Message[],
  prefixLength: number,
): string | undefined {
  const start = firstNonIdentical(messages, found)
  const { prefix, history } = messages
  const total = prefix.length + history.length
  if (start === total && found.length === total) return undefined
  const expectedAt = (i: number) => (i < prefix.length ? prefix[i] : history[i - prefix.length])
  const length = Math.max(total, found.length)
  for (let i = start; i < length; i++) {
    const a = expectedAt(i)
    const b = found[i]
    if (a === b) continue
    const where = `field messages differs at index ${i}`
    if (a === undefined && b !== undefined) {
      const implied = `the log implies ${total} message(s): ${prefixLength} prefix + ${total - prefixLength} history`
      return `${where}: ${implied}, but the request carries ${found.length}; extra ${describeMessage(b)}`
    }
    if (a !== undefined && b === undefined) {
      return `${where} (${part(i, prefixLength)}): the request carries only ${found.length} message(s); missing ${describeMessage(a)}`
    }
    if (a === undefined || b === undefined) continue
    if (a.id !== b.id) {
      return `${where} (${part(i, prefixLength)}): the log implies ${describeMessage(a)}, the request has ${describeMessage(b)}`
    }
    const diff = firstDifference(a, b, `messages[${i}]`)
    if (diff !== undefined) {
      return `${where} (${part(i, prefixLength)}, message ${a.id}) at ${diff.path}: the log implies ${excerpt(diff.expected)}, the request has ${excerpt(diff.found)}`
    }
  }
  return undefined
}
