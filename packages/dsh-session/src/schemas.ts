/**
 * The session event catalog: every event type the log accepts is declared once here — its payload
 * schema, the fast acceptance check (core types; pinned to the schema by a property test), where it
 * may stand (`placement`) and whether it contributes to the model's surface. Session append, every
 * storage backend's decode (`validateEvent`), the enclosure tracker, the invariants' log grammar and
 * the generated event reference (`docs/reference/events.md`) all read it. Core types are declared in
 * `coreEventCatalog`; packages add theirs with `defineSessionEvent`.
 */
import { deepFreeze, isRecord } from 'dsh-llm'
import type { z } from 'zod'
import { SessionError } from './errors.ts'
import { type FastCheck, fastPayloadChecks, isEnvelope } from './fast-payloads.ts'
import { formatPath } from './path.ts'
import { corePayloadSchemas, envelopeSchema } from './payload-schemas.ts'
import type { EventEnclosure, EventPlacement, SessionEvent } from './types.ts'

/** What the log knows about one event type. */
export interface SessionEventDefinition {
  /** Validates the payload (`data`). Only the verdict is used; the payload itself is stored as given. */
  readonly schema: z.ZodType
  /**
   * Where the type may stand: `anywhere` (also between turns), `turn` (only inside an open turn),
   * `step` (only inside the open step its payload names with `{turn, step}`).
   */
  readonly placement: EventPlacement
  /** `turn` for `turn` and `step` placements, else `anywhere` (the two-valued view of `placement`). */
  readonly enclosure: EventEnclosure
  /** Whether the type contributes a message to the model's surface (`deriveMessages()`). */
  readonly surface: boolean
  /** Declared by dsh-session itself (cannot be redefined or removed). */
  readonly core: boolean
  /** A fast acceptance check: `true` only when `schema` accepts; `false` means "ask the schema". */
  readonly fast?: FastCheck
}

/** How a core type is declared: its schema and fast check come from the tables keyed by type. */
interface CoreDeclaration {
  readonly placement: EventPlacement
  readonly surface?: true
}

/**
 * The core catalog. `placement` and `surface` per type; the schema is `corePayloadSchemas[type]` and
 * the fast check `fastPayloadChecks[type]` (both keyed by the same type names, which the `satisfies`
 * clauses keep in step: a core type without a schema does not compile).
 */
export const coreEventCatalog = {
  'turn/start': { placement: 'anywhere' },
  'turn/end': { placement: 'turn' },
  'step/start': { placement: 'turn' },
  'step/end': { placement: 'step' },
  'user/message': { placement: 'anywhere', surface: true },
  'assistant/chunk': { placement: 'step' },
  'assistant/message': { placement: 'step', surface: true },
  'tool/call': { placement: 'step' },
  'tool/result': { placement: 'step', surface: true },
  'request/header': { placement: 'turn' },
  'request/retry': { placement: 'step' },
  'session/end-seed': { placement: 'anywhere' },
  'agent/inbox/spliced': { placement: 'anywhere' },
  'compaction/start': { placement: 'anywhere' },
  'compaction/end': { placement: 'anywhere' },
} as const satisfies Record<keyof typeof corePayloadSchemas, CoreDeclaration>

const definitions = new Map<string, SessionEventDefinition>()
for (const [type, declaration] of Object.entries(coreEventCatalog) as [
  keyof typeof coreEventCatalog,
  CoreDeclaration,
][]) {
  const fast: FastCheck | undefined = (fastPayloadChecks as Partial<Record<string, FastCheck>>)[type]
  definitions.set(
    type,
    Object.freeze({
      schema: corePayloadSchemas[type],
      placement: declaration.placement,
      enclosure: enclosureOf(declaration.placement),
      surface: declaration.surface === true,
      core: true,
      ...(fast === undefined ? {} : { fast }),
    }),
  )
}

function enclosureOf(placement: EventPlacement): EventEnclosure {
  return placement === 'anywhere' ? 'anywhere' : 'turn'
}

/** What a package declares for its own event type (`defineSessionEvent`). */
export interface SessionEventDeclaration {
  readonly schema: z.ZodType
  /** Where it may stand; default `anywhere`. Overrides `enclosure` when both are given. */
  readonly placement?: EventPlacement
  /** The older two-valued form: `turn` = placement `turn`; default `anywhere`. */
  readonly enclosure?: EventEnclosure
  /**
   * Whether it contributes to the surface; default `false`. Only the core surface types are folded
   * into `deriveMessages()` today, so a package type declaring `true` is refused (`INVALID_DEFINITION`).
   */
  readonly surface?: boolean
  /** Optional fast acceptance check (`true` only when `schema` accepts). */
  readonly fast?: FastCheck
}

/**
 * Registers a package-added event type in the catalog (declare its payload on `SessionEventMap`
 * too) so the log can validate, append and load it. `placement` (or the older `enclosure`) defaults
 * to `anywhere`. Returns a disposer that removes the definition. Throws `DUPLICATE_EVENT_TYPE` if
 * the type is already defined (core types included).
 */
export function defineSessionEvent(type: string, declaration: SessionEventDeclaration): () => void {
  if (definitions.has(type)) {
    throw new SessionError('DUPLICATE_EVENT_TYPE', `event type ${type} is already defined`, {
      eventType: type,
    })
  }
  if (declaration.surface === true) {
    throw new SessionError(
      'INVALID_DEFINITION',
      `event type ${type} declares surface: true; only the core types user/message, assistant/message and tool/result contribute to the surface`,
      { eventType: type },
    )
  }
  const placement = declaration.placement ?? declaration.enclosure ?? 'anywhere'
  const entry: SessionEventDefinition = Object.freeze({
    schema: declaration.schema,
    placement,
    enclosure: enclosureOf(placement),
    surface: false,
    core: false,
    ...(declaration.fast === undefined ? {} : { fast: declaration.fast }),
  })
  definitions.set(type, entry)
  return () => {
    if (definitions.get(type) === entry) definitions.delete(type)
  }
}

/** Every event type defined now (core first, then packages' in definition order). */
export function sessionEventTypes(): readonly string[] {
  return [...definitions.keys()]
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
 * Checks an event payload against its definition: its fast check first, zod when that
 * does not accept (so the verdict and the error are zod's). Throws like `checkSchema` under `data`.
 */
export function checkPayload(
  definition: SessionEventDefinition,
  value: unknown,
  type: string,
  seq: number,
): void {
  if (definition.fast?.(value) === true) return
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
  if (!isRecord(value)) {
    throw new SessionError('INVALID_EVENT', 'invalid event: expected an object')
  }
  const record = value
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
  return value as unknown as SessionEvent
}
