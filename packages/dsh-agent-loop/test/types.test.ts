/**
 * Compile-time contracts of the public types: `tsc -p packages/dsh-agent-loop` (in `pnpm check`)
 * fails if a wrong tool argument type or an unknown event name stops being an error, because each
 * `@ts-expect-error` below must then be unused. (scripts/consumer-smoke.mjs checks the same against
 * the published declarations under NodeNext.)
 */
import type { Context } from 'cordis'
import type { ToolArgs } from 'dsh-agent-loop'
import { expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import { z as z3 } from 'zod3'

/** Registers tools and listeners with wrong types; only compiled, never run. */
export function wrongUses(app: Context): void {
  app.tools.register({
    name: 'add',
    description: 'Add two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    // @ts-expect-error `a` is a number, which has no toUpperCase
    execute: ({ a }) => a.toUpperCase(),
  })
  app.tools.register({
    name: 'shout',
    description: 'Shout',
    parameters: z3.object({ text: z3.string() }),
    jsonSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    // @ts-expect-error zod 3 infers the arguments too: `text` is a string, not a number
    execute: ({ text }) => text.toFixed(2),
  })
  // @ts-expect-error not an event any package declares
  app.on('agent/no-such-event', () => undefined)
  // @ts-expect-error `agent/status` listeners get (agent, status), and status is not a number
  app.on('agent/status', (_agent, status: number) => status)
}

it('infers tool arguments from each kind of parameters', () => {
  expectTypeOf<ToolArgs<z.ZodObject<{ a: z.ZodNumber }>>>().toEqualTypeOf<{ a: number }>()
  expectTypeOf<ToolArgs<{ readonly type: 'object' }>>().toEqualTypeOf<Record<string, unknown>>()
  expect(typeof wrongUses).toBe('function')
})
