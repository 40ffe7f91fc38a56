/** `ctx.tools`: the registry of tools the model may call. */
import { type Context, Service } from 'cordis'
import { frozenCopy, type ToolSchema } from 'dsh-llm'
import { AgentLoopError, AgentLoopErrorCode } from '../errors.ts'
import type { ToolDefinition, ToolInfo, ToolMode } from '../types.ts'
import { type ArgsCheck, compileToolSchema, type ToolParameters } from './schema.ts'

declare module 'cordis' {
  interface Context {
    tools: ToolRegistry
  }
}

/** A registered tool: its definition plus the JSON Schema and validator resolved once at registration. */
export interface RegisteredTool {
  readonly definition: ToolDefinition
  readonly info: ToolInfo
  readonly schema: ToolSchema
  /** Validates parsed arguments against `definition.parameters`. */
  check(args: unknown): ArgsCheck | Promise<ArgsCheck>
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

function invalid(message: string): AgentLoopError {
  return new AgentLoopError(AgentLoopErrorCode.INVALID_OPTIONS, message)
}

/**
 * The tool registry service (`ctx.tools`). Tools are offered to the model in registration order
 * (or in the order an agent's `tools` option names them).
 */
export class ToolRegistry extends Service {
  private readonly registered = new Map<string, RegisteredTool>()
  /** Bumped on every change of `registered`; a box, so effects update it whatever `this` they see. */
  private readonly revision = { value: 0 }

  constructor(ctx: Context) {
    super(ctx, 'tools')
  }

  /**
   * Registers a tool; an effect of the calling fiber (it goes away when that plugin unloads, or
   * when the returned disposer is called). `parameters` is a Standard Schema validator whose JSON
   * Schema comes from the library (Standard JSON Schema: zod 4, arktype) or from `jsonSchema`
   * (zod 3, valibot), or a plain JSON Schema object validated with Ajv; the JSON Schema is offered
   * without `$schema`. Throws `AgentLoopError` `DUPLICATE_TOOL` for a taken name and
   * `INVALID_OPTIONS` for a bad name, mode, description, timeout or schema; nothing is registered then.
   */
  register<S extends ToolParameters>(definition: ToolDefinition<S>): () => void {
    const { name } = definition
    if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
      throw invalid(`tools.register: name ${JSON.stringify(name)} must be 1-64 characters of [A-Za-z0-9_-]`)
    }
    if (typeof definition.description !== 'string') {
      throw invalid(`tools.register: tool "${name}" needs a string description`)
    }
    if (typeof definition.execute !== 'function') {
      throw invalid(`tools.register: tool "${name}" needs an execute function`)
    }
    const mode: ToolMode = definition.mode ?? 'parallel'
    if (mode !== 'parallel' && mode !== 'exclusive') {
      throw invalid(
        `tools.register: tool "${name}" mode must be 'parallel' or 'exclusive', got ${JSON.stringify(mode)}`,
      )
    }
    const { timeoutMs } = definition
    if (
      timeoutMs !== undefined &&
      (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs <= 0)
    ) {
      throw invalid(
        `tools.register: tool "${name}" timeoutMs must be a number > 0 (Infinity for none), got ${String(timeoutMs)}`,
      )
    }
    if (this.registered.has(name)) {
      throw new AgentLoopError(
        AgentLoopErrorCode.DUPLICATE_TOOL,
        `tools.register: tool "${name}" is already registered`,
      )
    }
    const compiled = compileToolSchema(name, definition.parameters, definition.jsonSchema)
    const erased = definition as unknown as ToolDefinition
    const entry: RegisteredTool = Object.freeze({
      definition: erased,
      info: Object.freeze({ name, description: definition.description, mode }),
      schema: frozenCopy({ name, description: definition.description, parameters: compiled.jsonSchema }),
      check: compiled.check,
    })
    const registered = this.registered
    const revision = this.revision
    const dispose = this.ctx.effect(() => {
      registered.set(name, entry)
      revision.value++
      return () => {
        if (registered.get(name) !== entry) return
        registered.delete(name)
        revision.value++
      }
    }, `tools.register(${name})`)
    return () => {
      void dispose()
    }
  }

  /**
   * Grows by one whenever a tool is registered or unregistered; while it is unchanged, `get` and
   * `select` answer as before (the loop uses it to skip re-rendering an unchanged request header).
   */
  get version(): number {
    return this.revision.value
  }

  /** The registered tool called `name`, if any. */
  get(name: string): RegisteredTool | undefined {
    return this.registered.get(name)
  }

  /** Names of every registered tool, in registration order. */
  names(): readonly string[] {
    return Object.freeze([...this.registered.keys()])
  }

  /**
   * The tools to offer: those named in `names` that are registered, in that order, or every
   * registered tool when `names` is undefined.
   */
  select(names: readonly string[] | undefined): readonly RegisteredTool[] {
    if (names === undefined) return Object.freeze([...this.registered.values()])
    const out: RegisteredTool[] = []
    for (const name of names) {
      const tool = this.registered.get(name)
      if (tool !== undefined) out.push(tool)
    }
    return Object.freeze(out)
  }
}
