import { Context } from 'cordis'
import { CHECK_NAMES, InvariantError, Invariants, resolveChecks } from 'dsh-invariants'
import { createCheckedApp, installInvariantGuard } from 'dsh-invariants/vitest'
import { LlmRuntime } from 'dsh-llm'
import { Sessions } from 'dsh-session'
import { describe, expect, it } from 'vitest'

installInvariantGuard()

describe('configuration', () => {
  it('mounts every check by default, narrowed by only and skip', () => {
    expect(CHECK_NAMES).toEqual(['request-reconstruction', 'log-grammar', 'stream-grammar'])
    expect(resolveChecks()).toEqual(['request-reconstruction', 'log-grammar', 'stream-grammar'])
    expect(resolveChecks({ only: ['stream-grammar', 'log-grammar'] })).toEqual([
      'log-grammar',
      'stream-grammar',
    ])
    expect(resolveChecks({ skip: ['log-grammar'] })).toEqual(['request-reconstruction', 'stream-grammar'])
    expect(resolveChecks({ only: ['log-grammar'], skip: ['log-grammar'] })).toEqual([])
  })

  it('refuses an unknown check name, naming it and the known ones', () => {
    const config = JSON.parse('{"skip": ["log-gramar"]}')
    expect(() => resolveChecks(config)).toThrow(
      expect.objectContaining({
        name: 'HarnessError',
        code: 'INVALID_OPTIONS',
        message:
          'invariants: config.skip names unknown check "log-gramar"; known checks: request-reconstruction, log-grammar, stream-grammar',
      }),
    )
    expect(() => resolveChecks(JSON.parse('{"only": "log-grammar"}'))).toThrow(
      'invariants: config.only must be an array of check names',
    )
  })

  it('refuses the plugin with an unknown check name: no service is provided', async () => {
    const app = new Context()
    await app.plugin(LlmRuntime)
    await app.plugin(Sessions)
    await expect(app.plugin(Invariants, JSON.parse('{"only": ["everything"]}'))).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message:
        'invariants: config.only names unknown check "everything"; known checks: request-reconstruction, log-grammar, stream-grammar',
    })
    expect(app.get('invariants')).toBeUndefined()
  })
})

describe('the registry', () => {
  it('starts with zero counters, no violations, and every check mounted', async () => {
    const app = await createCheckedApp()
    expect(app.invariants.checks).toEqual(['request-reconstruction', 'log-grammar', 'stream-grammar'])
    expect(app.invariants.isEnabled('log-grammar')).toBe(true)
    expect(app.invariants.counters).toEqual({
      requestsChecked: 0,
      requestsOutsideSteps: 0,
      eventsChecked: 0,
      streamsChecked: 0,
    })
    expect(app.invariants.violations).toEqual([])
  })

  it('records each violation it throws, and hands them over once', async () => {
    const app = await createCheckedApp()
    const session = await app.sessions.create()
    let thrown: unknown
    try {
      session.append('session/end-seed', {})
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(InvariantError)
    const violation = {
      check: 'log-grammar',
      seq: 0,
      sessionId: session.id,
      message: 'session/end-seed marks the end of a fork seed, but this session is not a fork',
    }
    expect((thrown as InvariantError).violation).toEqual(violation)
    expect(app.invariants.violations).toEqual([violation])
    expect(app.invariants.takeViolations()).toEqual([violation])
    expect(app.invariants.violations).toEqual([])
  })

  it('turns the checks off when its plugin unloads', async () => {
    const app = new Context()
    await app.plugin(LlmRuntime)
    await app.plugin(Sessions)
    const fiber = app.plugin(Invariants)
    await fiber
    const registry = app.invariants
    const session = await app.sessions.create()
    await fiber.dispose()
    session.append('user/message', { id: 'm' as never, role: 'user', content: [], source: { kind: 'user' } })
    expect(registry.counters.eventsChecked).toBe(0)
  })
})
