/**
 * Issue 30 item 1: one event catalog. Each type is declared once (schema, fast check, placement,
 * surface) and append, enclosure and the surface fold all read the same declaration.
 */
import {
  coreEventCatalog,
  defineSessionEvent,
  type SessionError,
  sessionEventDefinition,
  sessionEventTypes,
  surfaceMessage,
} from 'dsh-session'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { assistant, mountSessions, toolResult, user } from './support.ts'

const disposers: Array<() => void> = []
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose()
})

function refusal(run: () => unknown): { code: string; message: string } {
  try {
    run()
  } catch (error) {
    const { code, message } = error as SessionError
    return { code, message }
  }
  throw new Error('expected a refusal')
}

describe('the session event catalog', () => {
  it('declares every core type once with its placement and surface flag', () => {
    const traits = Object.fromEntries(
      Object.keys(coreEventCatalog).map((type) => {
        const definition = sessionEventDefinition(type)
        return [type, `${definition?.placement}${definition?.surface ? ' surface' : ''}`]
      }),
    )
    expect(traits).toEqual({
      'turn/start': 'anywhere',
      'turn/end': 'turn',
      'step/start': 'turn',
      'step/end': 'step',
      'user/message': 'anywhere surface',
      'assistant/chunk': 'step',
      'assistant/message': 'step surface',
      'tool/call': 'step',
      'tool/result': 'step surface',
      'request/header': 'turn',
      'request/retry': 'step',
      'session/end-seed': 'anywhere',
      'agent/inbox/spliced': 'anywhere',
      'compaction/start': 'anywhere',
      'compaction/end': 'anywhere',
    })
    expect(sessionEventTypes().slice(0, 15)).toEqual(Object.keys(coreEventCatalog))
    expect(sessionEventDefinition('tool/call')?.enclosure).toBe('turn')
    expect(sessionEventDefinition('step/end')?.enclosure).toBe('turn')
    expect(sessionEventDefinition('user/message')?.core).toBe(true)
  })

  it('agrees with the surface fold: exactly the surface types contribute a message', () => {
    const payloads: Record<string, unknown> = {
      'user/message': user('u1'),
      'assistant/message': { turn: 1, step: 1, message: assistant('a1', [{ type: 'text', text: 'x' }]) },
      'tool/result': { turn: 1, step: 1, message: toolResult('r1', 'c1') },
    }
    for (const type of Object.keys(coreEventCatalog)) {
      const contributes = surfaceMessage(type, payloads[type] ?? {}) !== undefined
      expect([type, contributes]).toEqual([type, sessionEventDefinition(type)?.surface])
    }
  })

  it('places a package type in a step: append refuses it outside the open step it names', async () => {
    disposers.push(
      defineSessionEvent('test/step-note', {
        schema: z.object({ turn: z.number(), step: z.number(), text: z.string() }),
        placement: 'step',
      }),
    )
    expect(sessionEventDefinition('test/step-note')).toMatchObject({
      placement: 'step',
      enclosure: 'turn',
      surface: false,
      core: false,
    })
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('turn/start', { turn: 1, trigger: { kind: 'queued' } })
    const note = { turn: 1, step: 1, text: 'n' }
    expect(refusal(() => session.append('test/step-note' as 'user/message', note as never))).toEqual({
      code: 'ENCLOSURE',
      message: 'test/step-note at seq 1 needs an open step; turn 1 has none open',
    })
    session.append('step/start', { turn: 1, step: 1 })
    expect(session.append('test/step-note' as 'user/message', note as never).seq).toBe(2)
  })

  it('refuses a package type that declares itself surface', () => {
    expect(
      refusal(() => defineSessionEvent('test/surface', { schema: z.object({}), surface: true })),
    ).toEqual({
      code: 'INVALID_DEFINITION',
      message:
        'event type test/surface declares surface: true; only the core types user/message, assistant/message and tool/result contribute to the surface',
    })
    expect(sessionEventDefinition('test/surface')).toBeUndefined()
  })

  it('uses a package fast check only when it accepts, zod otherwise', async () => {
    let fastCalls = 0
    disposers.push(
      defineSessionEvent('test/fast', {
        schema: z.object({ n: z.number() }),
        fast: (value) => {
          fastCalls++
          return typeof (value as { n?: unknown }).n === 'number'
        },
      }),
    )
    const app = await mountSessions()
    const session = await app.sessions.create()
    session.append('test/fast' as 'user/message', { n: 1 } as never)
    expect(fastCalls).toBe(1)
    expect(refusal(() => session.append('test/fast' as 'user/message', { n: 'x' } as never))).toEqual({
      code: 'INVALID_EVENT',
      message: 'invalid test/fast event at seq 1: data.n: Invalid input: expected number, received string',
    })
  })
})
