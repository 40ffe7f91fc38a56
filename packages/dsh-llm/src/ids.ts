import { urlAlphabet } from 'nanoid'

declare const brand: unique symbol

/** A string made nominal at compile time. Branding is a cast: it costs nothing at run time. */
export type Brand<T, B extends string> = T & { readonly [brand]: B }

/** Identifies one message across the inbox, the log and every request. */
export type MessageId = Brand<string, 'MessageId'>
/** Identifies one tool call; a `tool-result` names the call it answers by this id. */
export type CallId = Brand<string, 'CallId'>
/** Identifies one session (one append-only log). */
export type SessionId = Brand<string, 'SessionId'>

function brandNonEmpty<B extends string>(kind: B, value: string): Brand<string, B> {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${kind} must be a non-empty string, got ${JSON.stringify(value)}`)
  }
  return value as Brand<string, B>
}

/** Brands an existing string as a `MessageId`. Throws `TypeError` for an empty or non-string value. */
export function MessageId(value: string): MessageId {
  return brandNonEmpty('MessageId', value)
}
/** Brands an existing string as a `CallId`. Throws `TypeError` for an empty or non-string value. */
export function CallId(value: string): CallId {
  return brandNonEmpty('CallId', value)
}
/** Brands an existing string as a `SessionId`. Throws `TypeError` for an empty or non-string value. */
export function SessionId(value: string): SessionId {
  return brandNonEmpty('SessionId', value)
}

/**
 * Where the id source lives: on `globalThis` under a registered symbol, so that every copy of
 * dsh-llm a project happens to load (a second version in a nested `node_modules`) mints from it.
 */
const ID_SOURCE = Symbol.for('dsh-llm.idSource')

function sourcedId(source: () => string): string {
  const id: unknown = source()
  if (typeof id !== 'string' || id === '') {
    throw new TypeError(`setIdSource: the id source returned ${JSON.stringify(id)}, not a non-empty string`)
  }
  return id
}

/**
 * Makes every id dsh mints from now on — message ids (user, assistant and tool-result messages the
 * loop creates), call ids and session ids — come from `source` instead of nanoid; `undefined` goes
 * back to random ids. This is the seam for tests that need byte-identical session logs (with the
 * `Sessions` `clock` option for times): it is process-wide, so set it before the run and reset it
 * after. Ids given explicitly (`createUserMessage({ id })`, `create({ sessionId })`) are kept. A
 * source must return a non-empty string each call, unique within a session; minting throws a
 * `TypeError` otherwise. Throws `TypeError` if `source` is neither a function nor `undefined`.
 */
export function setIdSource(source: (() => string) | undefined): void {
  if (source !== undefined && typeof source !== 'function') {
    throw new TypeError(`setIdSource: expected a function or undefined, got ${String(source)}`)
  }
  const slot = globalThis as { [ID_SOURCE]?: () => string }
  if (source === undefined) delete slot[ID_SOURCE]
  else slot[ID_SOURCE] = source
}

/** nanoid's alphabet (64 URL-safe characters) as char codes: each character of an id is one of them. */
const ALPHABET_CODES = Uint8Array.from(urlAlphabet, (character) => character.charCodeAt(0))
/** The length of a random id (nanoid's default): 21 characters of 6 random bits each. */
const ID_SIZE = 21
/** Random bytes fetched at once, as nanoid pools them: enough for 128 ids. */
const POOL_SIZE = ID_SIZE * 128
let pool: Uint8Array | undefined
let poolOffset = POOL_SIZE

/** The alphabet character picked by byte `at` of `bytes` (its low 6 bits). */
function codeAt(bytes: Uint8Array, at: number): number {
  return ALPHABET_CODES[(bytes[at] as number) & 63] as number
}

/**
 * A random id as nanoid makes one (21 characters of its alphabet, from the platform's
 * `crypto.getRandomValues`, pooled), built as one flat string in a single call. nanoid appends one
 * character at a time, which V8 keeps as a rope of 21 cons strings (~330 bytes) until flattened;
 * this takes about half the time of nanoid plus the flattening (the id-minting Agent Note).
 */
function randomId(): string {
  let bytes = pool
  if (bytes === undefined) {
    bytes = new Uint8Array(POOL_SIZE)
    pool = bytes
  }
  if (poolOffset + ID_SIZE > POOL_SIZE) {
    crypto.getRandomValues(bytes)
    poolOffset = 0
  }
  const o = poolOffset
  poolOffset = o + ID_SIZE
  return String.fromCharCode(
    codeAt(bytes, o),
    codeAt(bytes, o + 1),
    codeAt(bytes, o + 2),
    codeAt(bytes, o + 3),
    codeAt(bytes, o + 4),
    codeAt(bytes, o + 5),
    codeAt(bytes, o + 6),
    codeAt(bytes, o + 7),
    codeAt(bytes, o + 8),
    codeAt(bytes, o + 9),
    codeAt(bytes, o + 10),
    codeAt(bytes, o + 11),
    codeAt(bytes, o + 12),
    codeAt(bytes, o + 13),
    codeAt(bytes, o + 14),
    codeAt(bytes, o + 15),
    codeAt(bytes, o + 16),
    codeAt(bytes, o + 17),
    codeAt(bytes, o + 18),
    codeAt(bytes, o + 19),
    codeAt(bytes, o + 20),
  )
}

/** A fresh random id (or the id source's next id, see `setIdSource`), behind `prefix`, flat. */
function flatId(prefix = ''): string {
  const source = (globalThis as { [ID_SOURCE]?: () => string })[ID_SOURCE]
  if (source !== undefined) return prefix + sourcedId(source)
  if (prefix === '') return randomId()
  const id = prefix + randomId()
  // A prefixed id is a cons string: reading a character flattens it in place (~50 bytes kept).
  id.charCodeAt(0)
  return id
}

/** Mints a fresh random `MessageId` (nanoid, 21 URL-safe characters). */
export function newMessageId(): MessageId {
  return flatId() as MessageId
}
/** Mints a fresh random `CallId`. */
export function newCallId(): CallId {
  return flatId('call_') as CallId
}
/** Mints a fresh random `SessionId`. */
export function newSessionId(): SessionId {
  return flatId() as SessionId
}
