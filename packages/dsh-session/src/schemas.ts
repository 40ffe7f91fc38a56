/**
 * The registry of event types: each known type has a payload schema and an enclosure rule. Core types
 * are predefined; packages add theirs with `defineSessionEvent`. Loaders validate through here.
 */
import { deepFreeze } from 'dsh-llm'
import type { z } from 'zod'
import { SessionError } from './errors.ts'
import { type FastCheck, fastPayloadChecks, isEnvelope } from './fast-payloads.ts'
import { formatPath } from './path.ts'
import { corePayloadSchemas, envelopeSchema } from './payload-schemas.ts'
import type { EventEnclosure, SessionEvent } from './types.ts'

/** What the log knows about one event type. */
export interface SessionEventDefinition {
  /** Validates the payload (`data`). Only the verdict is used; the payload itself is stored as given. */
  readonly schema: z.ZodType
  /** `turn`: only inside an open turn; `anywhere`: also between turns. */
  readonly enclosure: EventEnclosure
}

const EXECUTION_TYPES = new Set([
  'turn/end',
  'step/start',
  'step/end',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'request/header',
  'request/retry',
])

const definitions = new Map<string, SessionEventDefinition>()
/** Core definitions with a hand-written fast check (core types cannot be redefined or removed). */
const fastChecks = new Map<SessionEventDefinition, FastCheck>()
for (const [type, schema] of Object.entries(corePayloadSchemas)) {
  const definition: SessionEventDefinition = {
    schema,
    enclosure: EXECUTION_TYPES.has(type) ? 'turn' : 'anywhere',
  }
  definitions.set(type, definition)
  const fast = fastPayloadChecks.get(type)
  if (fast !== undefined) fastChecks.set(definition, fast)
}
const coreTypes = new Set(definitions.keys())

/**
 * Registers a package-added event type (declare its payload on `SessionEventMap` too) so the log can
 * validate, append and load it. `enclosure` defaults to `anywhere`. Returns a disposer that removes
 * the definition. Throws `DUPLICATE_EVENT_TYPE` if the type is already defined (core types included).
 */
export function defineSessionEvent(
  type: string,
  definition: { readonly schema: z.ZodType; readonly enclosure?: EventEnclosure },
): () => void {
  if (definitions.has(type)) {
    throw new SessionError('DUPLICATE_EVENT_TYPE', `event type ${type} is already defined`, {
      eventType: type,
    })
  }
  const entry: SessionEventDefinition = {
    schema: definition.schema,
    enclosure: definition.enclosure ?? 'anywhere',
  }
  definitions.set(type, entry)
  return () => {
    if (definitions.get(type) === entry && !coreTypes.has(type)) definitions.delete(type)
  }
}

/** The definition of `type`, or `undefined` if no package defined it. */
export function sessionEventDefinition(type: string): SessionEventDefinition | undefined {
  return definitions.get(type)
}

/** The definition of `type`; throws `UNKNOWN_EVENT_TYPE` (naming the type and seq) if there is none. */
export function requireEventDefinition(type: string, seq: number): SessionEventDefinition {
  const definition = definitions.get(type)
  if (definition === undefined) {
    throw new SessionError('UNKNOWN_EVENT_TYPE', `unknown event type ${type} at seq ${seq}`, {
      eventType: type,
      seq,
    })
  }
  return definition
}

/**
 * Checks `value` against `schema`; throws `INVALID_EVENT` naming the event type, seq and the path of
 * the first offending member under `root` (`data.message.content[2].text`).
 */
export function checkSchema(
  schema: z.ZodType,
  value: unknown,
  type: string,
  seq: number,
  root: string,
): void {
  const result = schema.safeParse(value)
  if (result.success) return
  const issue = result.error.issues[0]
  const path = formatPath(root, issue?.path ?? [])
  throw new SessionError(
    'INVALID_EVENT',
    `invalid ${type} event at seq ${seq}: ${path}: ${issue?.message ?? 'invalid value'}`,
    { eventType: type, seq, path },
  )
}

/**
 * Checks an event payload against its definition: the core types' fast check first, zod when that
 * does not accept (so the verdict and the error are zod's). Throws like `checkSchema` under `data`.
 */
export function checkPayload(
  definition: SessionEventDefinition,
  value: unknown,
  type: string,
  seq: number,
): void {
  if (fastChecks.get(definition)?.(value) === true) return
  checkSchema(definition.schema, value, type, seq, 'data')
}

/**
 * Validates one stored event (the envelope, then the payload against its type's schema) and returns
 * it deep-frozen (the same object). Throws `SessionError` `UNKNOWN_EVENT_TYPE` for a type nobody
 * defined, or `INVALID_EVENT` naming the type, seq and path of the defect. Loaders add file and line.
 */
export function validateEvent(value: unknown): SessionEvent {
  return deepFreeze(checkEvent(value))
}

/** `validateEvent` without the freeze: the loader freezes freshly parsed values its own way. */
export function checkEvent(value: unknown): SessionEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SessionError('INVALID_EVENT', 'invalid event: expected an object')
  }
  const record = value as Record<string, unknown>
  const type = typeof record.type === 'string' ? record.type : '(no type)'
  const seq = typeof record.seq === 'number' ? record.seq : -1
  if (!Object.hasOwn(record, 'data')) {
    throw new SessionError('INVALID_EVENT', `invalid ${type} event at seq ${seq}: data: missing`, {
      eventType: type,
      seq,
      path: 'data',
    })
  }
  if (!isEnvelope(value)) checkSchema(envelopeSchema, value, type, seq, '')
  const definition = requireEventDefinition(type, seq)
  checkPayload(definition, record.data, type, seq)
  return value as SessionEvent
}
