/** One tool, four schema libraries: zod 4, zod 3, valibot (Standard Schema) and plain JSON Schema. */
import { AgentLoopErrorCode, type ToolDefinition, type ToolParameters } from 'dsh-agent-loop'
import { textResponse, toolCallResponse } from 'dsh-llm/testing'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { z as z3 } from 'zod3'
import { createHarness, dataOf } from './harness.ts'

/** The JSON Schema the model is offered for `add`, as each library (or the user) writes it. */
const ADD_SCHEMA = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
  additionalProperties: false,
} as const

interface Flavour {
  readonly library: string
  register(h: Awaited<ReturnType<typeof createHarness>>): void
}

const describeAdd = { name: 'add', description: 'Add two numbers' } as const

const flavours: readonly Flavour[] = [
  {
    library: 'zod 4 (JSON Schema derived)',
    register: (h) =>
      h.app.tools.register({
        ...describeAdd,
        parameters: z.object({ a: z.number(), b: z.number() }),
        execute: ({ a, b }) => String(a + b),
      }),
  },
  {
    library: 'zod 3 (JSON Schema given)',
    register: (h) =>
      h.app.tools.register({
        ...describeAdd,
        parameters: z3.object({ a: z3.number(), b: z3.number() }).strict(),
        jsonSchema: ADD_SCHEMA,
        execute: ({ a, b }) => String(a + b),
      }),
  },
  {
    library: 'valibot (JSON Schema given)',
    register: (h) =>
      h.app.tools.register({
        ...describeAdd,
        parameters: v.strictObject({ a: v.number(), b: v.number() }),
        jsonSchema: ADD_SCHEMA,
        execute: ({ a, b }) => String(a + b),
      }),
  },
  {
    library: 'plain JSON Schema (Ajv)',
    register: (h) =>
      h.app.tools.register({
        ...describeAdd,
        parameters: ADD_SCHEMA,
        execute: ({ a, b }) => String(Number(a) + Number(b)),
      }),
  },
]

function resultTexts(h: Awaited<ReturnType<typeof createHarness>>, sessionId: string): string[] {
  const agent = h.app.agentLoop.agentFor(sessionId as never)
  const session = agent?.session
  if (session === undefined) return []
  return dataOf<{ message: { content: [{ content: [{ text: string }] }] } }>(session, 'tool/result').map(
    (data) => data.message.content[0].content[0].text,
  )
}

describe.each(flavours)('a tool defined with $library', ({ register }) => {
  it('is offered with its JSON Schema and runs with validated arguments', async () => {
    const h = await createHarness([toolCallResponse('c1', 'add', { a: 2, b: 40 }), textResponse('42')])
    register(h)
    const agent = await h.create()
    const result = await agent.prompt('2 + 40?')
    expect(result.text).toBe('42')
    expect(h.model.requests[0]?.tools).toEqual([{ ...describeAdd, parameters: ADD_SCHEMA }])
    expect(resultTexts(h, agent.session.id)).toEqual(['42'])
  })

  it('refuses arguments of the wrong type without running the body', async () => {
    const h = await createHarness([toolCallResponse('c1', 'add', { a: 'two', b: 40 }), textResponse('oops')])
    register(h)
    const agent = await h.create()
    await agent.prompt('2 + 40?')
    const [text] = resultTexts(h, agent.session.id)
    expect(text).toMatch(/^tool "add" \(call c1\): arguments do not match the schema: ✖ .+\n {2}→ at a$/)
  })
})

describe('a zod 4 schema with defaults and transforms', () => {
  it('is offered as the model should fill it: a field with a default is optional, objects stay closed', async () => {
    const h = await createHarness([toolCallResponse('c1', 'read', { path: 'a.txt' }), textResponse('ok')])
    const seen: unknown[] = []
    h.app.tools.register({
      name: 'read',
      description: 'Read a file',
      parameters: z.object({
        path: z.string(),
        limit: z.number().default(100),
        options: z.object({ raw: z.boolean().optional() }).default({}),
      }),
      execute: (args) => {
        seen.push(args)
        return 'text'
      },
    })
    const agent = await h.create()
    await agent.prompt('read a.txt')
    expect(h.model.requests[0]?.tools?.[0]?.parameters).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string' },
        limit: { type: 'number', default: 100 },
        options: {
          type: 'object',
          properties: { raw: { type: 'boolean' } },
          additionalProperties: false,
          default: {},
        },
      },
      required: ['path'],
      additionalProperties: false,
    })
    // The body still gets the output side: defaults filled in.
    expect(seen).toEqual([{ path: 'a.txt', limit: 100, options: {} }])
  })
})

describe('schemas that cannot be offered are refused at registration', () => {
  it('a Standard Schema whose library derives no JSON Schema, without jsonSchema', async () => {
    const h = await createHarness()
    expect(() =>
      h.app.tools.register({
        ...describeAdd,
        parameters: v.object({ a: v.number() }),
        execute: () => 'never',
      }),
    ).toThrow(
      expect.objectContaining({
        code: AgentLoopErrorCode.INVALID_OPTIONS,
        message:
          'tools.register: tool "add": its valibot schema offers no JSON Schema (Standard JSON Schema); pass jsonSchema beside parameters',
      }),
    )
    expect(h.app.tools.names()).toEqual([])
  })

  it('a JSON Schema Ajv cannot compile, and jsonSchema beside a JSON Schema', async () => {
    const h = await createHarness()
    expect(() =>
      h.app.tools.register({ ...describeAdd, parameters: { type: 'no-such-type' }, execute: () => 'never' }),
    ).toThrow(
      expect.objectContaining({
        code: AgentLoopErrorCode.INVALID_OPTIONS,
        message: expect.stringMatching(
          /^tools\.register: tool "add": parameters is not a valid JSON Schema: /,
        ),
      }),
    )
    const twice: ToolDefinition<ToolParameters> = {
      ...describeAdd,
      parameters: ADD_SCHEMA,
      jsonSchema: ADD_SCHEMA,
      execute: () => 'never',
    }
    expect(() => h.app.tools.register(twice)).toThrow(
      expect.objectContaining({
        message:
          'tools.register: tool "add": jsonSchema is only for Standard Schema parameters; parameters already is a JSON Schema',
      }),
    )
  })
})
