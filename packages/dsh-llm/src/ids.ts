import { nanoid } from 'nanoid'

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

/**
 * A fresh nanoid (or the id source's next id, see `setIdSource`), flattened. nanoid builds its id one character at a time, which V8 keeps as a
 * rope of 21 cons strings (~330 bytes on the heap); ids are kept for the life of a session (every
 * message and call carries one), so each is flattened once here (~50 bytes): reading a character
 * makes V8 replace the rope by one flat string in place.
 */
function flatId(prefix = ''): string {
  const source = (globalThis as { [ID_SOURCE]?: () => string })[ID_SOURCE]
  if (source !== undefined) return prefix + sourcedId(source)
  const id = prefix + nanoid()
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
