/** Regression: Ajv kept every compiled schema with an `$id`, so that `$id` could never be registered again. */
import { Context } from 'cordis'
import { ToolRegistry } from 'dsh-agent-loop'
import { describe, expect, it } from 'vitest'

const schema = (description: string) => ({
  $id: 'urn:example:lookup',
  description,
  type: 'object',
  properties: { key: { type: 'string' } },
  required: ['key'],
})

describe('plain JSON Schema parameters with an $id', () => {
  it('register again after the tool is unregistered, and two tools may share the $id', async () => {
    const app = new Context()
    await app.plugin(ToolRegistry)
    const execute = () => 'ok'
    const dispose = app.tools.register({
      name: 'lookup',
      description: 'v1',
      parameters: schema('v1'),
      execute,
    })
    dispose()
    app.tools.register({ name: 'lookup', description: 'v2', parameters: schema('v2'), execute })
    app.tools.register({ name: 'lookup_too', description: 'same $id', parameters: schema('v3'), execute })
    const tool = app.tools.get('lookup')
    expect(await tool?.check({ key: 'k' })).toEqual({ ok: true, value: { key: 'k' } })
    expect(await tool?.check({})).toMatchObject({ ok: false })
  })
})
