/**
 * Tool parameter schemas from any library: a Standard Schema validator (zod 3.24+, zod 4, valibot,
 * arktype, ...) with its JSON Schema (derived through Standard JSON Schema where the library offers
 * it, given as `jsonSchema` otherwise), or a plain JSON Schema object validated by Ajv.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec'
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv'
import Ajv2020 from 'ajv/dist/2020.js'
import { frozenCopy, isRecord, type JsonSchema } from 'dsh-llm'
import { AgentLoopError, AgentLoopErrorCode, describeError } from '../errors.ts'

/** What a tool's `parameters` may be: a Standard Schema validator, or a plain JSON Schema object. */
export type ToolParameters = StandardSchemaV1 | JsonSchema

/** The arguments `execute` receives: the validator's output type, or a plain object for JSON Schema. */
export type ToolArgs<S extends ToolParameters> =
  S extends StandardSchemaV1<unknown, infer Output> ? Output : Record<string, unknown>

/** The outcome of validating a call's parsed arguments. */
export type ArgsCheck =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problems: string }

/** A tool's schema, resolved once at registration. */
export interface CompiledToolSchema {
  /** The JSON Schema offered to the model (without `$schema`), frozen. */
  readonly jsonSchema: JsonSchema
  /** Validates parsed arguments; synchronous unless the Standard Schema validator is async. */
  check(value: unknown): ArgsCheck | Promise<ArgsCheck>
}

function invalid(message: string, cause?: unknown): AgentLoopError {
  return new AgentLoopError(
    AgentLoopErrorCode.INVALID_OPTIONS,
    message,
    cause === undefined ? undefined : { cause },
  )
}

function isStandard(value: unknown): value is StandardSchemaV1 {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false
  const props = (value as { readonly '~standard'?: { readonly validate?: unknown } })['~standard']
  return typeof props?.validate === 'function'
}

function withoutDialect(schema: Record<string, unknown>): JsonSchema {
  const { $schema: _dialect, ...rest } = schema
  return frozenCopy(rest)
}

/**
 * Resolves `parameters` (and the optional explicit `jsonSchema`) of tool `name`. Throws
 * `INVALID_OPTIONS` naming the tool when neither is usable: a Standard Schema whose library offers
 * no JSON Schema and no `jsonSchema` was given, a converter that throws, a `jsonSchema` beside a
 * plain JSON Schema, or a JSON Schema Ajv cannot compile.
 */
export function compileToolSchema(name: string, parameters: unknown, explicit: unknown): CompiledToolSchema {
  const where = `tools.register: tool "${name}"`
  if (explicit !== undefined && !isRecord(explicit)) {
    throw invalid(`${where}: jsonSchema must be a JSON Schema object`)
  }
  if (isStandard(parameters)) {
    const jsonSchema =
      explicit === undefined
        ? derivedJsonSchema(where, parameters)
        : withoutDialect(explicit as Record<string, unknown>)
    const props = parameters['~standard']
    return {
      jsonSchema,
      check: (value) => {
        const result = props.validate(value)
        return result instanceof Promise ? result.then(standardCheck) : standardCheck(result)
      },
    }
  }
  if (!isRecord(parameters)) {
    throw invalid(
      `${where}: parameters must be a Standard Schema validator (zod, valibot, arktype, ...) or a JSON Schema object`,
    )
  }
  if (explicit !== undefined) {
    throw invalid(
      `${where}: jsonSchema is only for Standard Schema parameters; parameters already is a JSON Schema`,
    )
  }
  const jsonSchema = withoutDialect(parameters as Record<string, unknown>)
  const validate = compileJsonSchema(where, parameters as Record<string, unknown>, jsonSchema)
  return {
    jsonSchema,
    check: (value) =>
      validate(value) ? { ok: true, value } : { ok: false, problems: ajvProblems(validate.errors) },
  }
}

function derivedJsonSchema(where: string, schema: StandardSchemaV1): JsonSchema {
  const props: Partial<StandardJSONSchemaV1.Props> = schema['~standard']
  const converter = props.jsonSchema
  if (typeof converter?.output !== 'function' || typeof converter.input !== 'function') {
    throw invalid(
      `${where}: its ${schema['~standard'].vendor} schema offers no JSON Schema (Standard JSON Schema); pass jsonSchema beside parameters`,
    )
  }
  try {
    // The input side is what the model should send: a field with a default is optional there
    // (the output side lists it as required). zod marks closed objects `additionalProperties:
    // false` only on the output side, so those marks are carried over.
    const input = converter.input({ target: 'draft-2020-12' })
    const output = converter.output({ target: 'draft-2020-12' })
    return withoutDialect(closedLike(input, output) as Record<string, unknown>)
  } catch (error) {
    throw invalid(`${where}: parameters cannot be converted to JSON Schema: ${describeError(error)}`, error)
  }
}

/**
 * `input` with `additionalProperties: false` added wherever `output` has it at the same place and
 * `input` says nothing about additional properties.
 */
function closedLike(input: unknown, output: unknown): unknown {
  if (input === null || typeof input !== 'object' || output === null || typeof output !== 'object') {
    return input
  }
  if (Array.isArray(input)) {
    return input.map((item, i) => closedLike(item, Array.isArray(output) ? output[i] : undefined))
  }
  const from = output as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) out[key] = closedLike(value, from[key])
  if (from.additionalProperties === false && !('additionalProperties' in out)) {
    out.additionalProperties = false
  }
  return out
}

function standardCheck(result: StandardSchemaV1.Result<unknown>): ArgsCheck {
  if (result.issues === undefined) return { ok: true, value: result.value }
  return {
    ok: false,
    problems: result.issues.map((issue) => problem(issue.message, pathOf(issue.path))).join('\n'),
  }
}

function pathOf(path: StandardSchemaV1.Issue['path']): string {
  if (path === undefined || path.length === 0) return ''
  let out = ''
  for (const segment of path) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`
  }
  return out
}

function problem(message: string, path: string): string {
  return path === '' ? `✖ ${message}` : `✖ ${message}\n  → at ${path}`
}

/**
 * `addUsedSchema: false`: the shared instances do not keep compiled schemas by `$id`, so a schema
 * with an `$id` can be registered again (after its tool was unregistered, or by a second tool).
 */
const AJV_OPTIONS = { allErrors: true, strict: false, addUsedSchema: false } as const

const validators: { draft07?: Ajv; draft2020?: Ajv2020 } = {}

/** The shared Ajv instance for a schema's dialect: 2020-12 when it says so, else draft-07. */
function ajvFor(dialect: string): Ajv {
  if (dialect.includes('2020-12')) {
    validators.draft2020 ??= new Ajv2020(AJV_OPTIONS)
    return validators.draft2020
  }
  validators.draft07 ??= new Ajv(AJV_OPTIONS)
  return validators.draft07
}

function compileJsonSchema(
  where: string,
  original: Record<string, unknown>,
  schema: JsonSchema,
): ValidateFunction {
  const dialect = typeof original.$schema === 'string' ? original.$schema : ''
  try {
    return ajvFor(dialect).compile(schema)
  } catch (error) {
    throw invalid(`${where}: parameters is not a valid JSON Schema: ${describeError(error)}`, error)
  }
}

function ajvProblems(errors: readonly ErrorObject[] | null | undefined): string {
  if (errors === null || errors === undefined || errors.length === 0) return '✖ invalid'
  return errors
    .map((error) => problem(error.message ?? 'invalid', error.instancePath.slice(1).replaceAll('/', '.')))
    .join('\n')
}
