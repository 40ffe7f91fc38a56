/**
 * The compaction events are declared in the one event catalog, with their crash repair: a process
 * that never imports dsh-compaction (the invariants CLI, the viewer, a plain app) loads, checks and
 * repairs a compacted log.
 */
import { Context } from 'cordis'
import { userText } from 'dsh-llm'
import { repairClosers, type Session, Sessions, sessionEventDefinition, validateEvent } from 'dsh-session'
import { describe, expect, test } from 'vitest'

function append(session: Session, type: string, data: unknown): void {
  ;(session.append as (type: string, data: unknown) => unknown).call(session, type, data)
}

describe('compaction events in the core catalog', () => {
  test('compaction/start and compaction/end are core types that may stand anywhere, off the surface', () => {
    for (const type of ['compaction/start', 'compaction/end']) {
      expect(sessionEventDefinition(type)).toMatchObject({
        core: true,
        placement: 'anywhere',
        surface: false,
      })
    }
  })

  test('a stored compaction/start validates; a bad strategy is refused naming the path', () => {
    const data = {
      id: 'compaction-1',
      trigger: 'manual',
      strategy: 'prune',
      window: 1000,
      tokensBefore: 50,
      replaces: 1,
    }
    expect(validateEvent({ type: 'compaction/start', seq: 3, time: 1, data }).type).toBe('compaction/start')
    expect(() =>
      validateEvent({ type: 'compaction/start', seq: 3, time: 1, data: { ...data, strategy: 'shred' } }),
    ).toThrow('invalid compaction/start event at seq 3: data.strategy')
  })

  test('an open compaction is closed by repair without any package registering a closer', async () => {
    const app = new Context()
    await app.plugin(Sessions)
    const session = await app.sessions.create()
    append(session, 'user/message', userText('hello'))
    append(session, 'compaction/start', {
      id: 'compaction-1',
      trigger: 'manual',
      strategy: 'prune',
      window: 1000,
      tokensBefore: 50,
      replaces: 1,
    })
    expect(repairClosers(session.events)).toEqual([
      { type: 'compaction/end', data: { id: 'compaction-1', outcome: 'interrupted', repaired: true } },
    ])
    await app.fiber.dispose()
  })
})
